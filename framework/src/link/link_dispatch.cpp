// link_dispatch: handing a link's frames on (see link/link_dispatch.hpp).
#include "link/link_dispatch.hpp"

#include "link/actor_links.hpp"
#include "link/delivery_batch.hpp"
#include "wire/control.hpp"

#include "ferry/errc.hpp"

#include <caf/actor_cast.hpp>
#include <caf/exit_reason.hpp>
#include <caf/make_message.hpp>
#include <caf/system_messages.hpp>

#include <algorithm>
#include <limits>

namespace ferry::detail {

namespace {

using wire::frame_type;

/// Body bytes of control frames, requests and answers at most (an error's
/// text is at most `wire::max_str`).
constexpr uint64_t max_control = uint64_t{2} << 20;

/// Bytes a message or spawn frame may hold beyond its payload's frames.
constexpr uint64_t message_slack = uint64_t{1} << 20;

/// Bytes of a batch frame at most: a sender flushes its batch at 256 KiB of
/// wire size, each message at most 16 KiB (link/outbox.cpp).
constexpr uint64_t max_batch = uint64_t{4} << 20;

uint64_t saturated_add(uint64_t x, uint64_t y) {
  return x > std::numeric_limits<uint64_t>::max() - y
           ? std::numeric_limits<uint64_t>::max()
           : x + y;
}

/// Reads a control frame of type `T` from `body`.
template <class T>
caf::expected<T> parse(std::span<const std::byte> body) {
  wire::reader in{body, wire::name_of(T::type)};
  T x;
  if (auto err = x.read(in))
    return err;
  return x;
}

} // namespace

link_dispatch::link_dispatch(link_host& host, std::weak_ptr<link_state> link,
                             const link_config& cfg)
  : host_(host),
    link_(std::move(link)),
    max_message_(saturated_add(cfg.max_message_size, message_slack)),
    // A relaying node answers chunks of another link's size: the bound is
    // generous, and a chunk takes memory only as its bytes arrive.
    max_chunk_(
      saturated_add(std::max(4 * cfg.chunk_size, uint64_t{64} << 20), 64)) {
  // nop
}

uint64_t link_dispatch::max_body(frame_type type) const {
  switch (type) {
  case frame_type::message:
  case frame_type::spawn:
    return max_message_;
  case frame_type::batch:
    return max_batch;
  case frame_type::chunk:
    return max_chunk_;
  case frame_type::refuse:
    return max_control;
  case frame_type::intro:
  case frame_type::hello:
  case frame_type::welcome:
  case frame_type::heartbeat:
  case frame_type::goodbye:
  case frame_type::probe:
    return 0;
  default:
    return max_control;
  }
}

uint64_t link_dispatch::max_frame() const {
  auto body = std::max({max_message_, max_batch, max_chunk_, max_control});
  return saturated_add(body, wire::header_size);
}

import_landing* link_dispatch::imports() {
  return &host_.imports();
}

void link_dispatch::on_open(net::connection&) {
  // The connection was open before the link was made.
}

void link_dispatch::on_closed(net::connection&, const caf::error& why) {
  if (auto l = link_.lock())
    host_.link_lost(
      l, why ? why
             : caf::make_error(errc::link_down, "the connection to node " +
                                                  l->peer_name() + " closed"));
}

caf::error link_dispatch::on_message(wire_message&& msg) {
  auto l = link_.lock();
  if (!l || l->is_down())
    return caf::none;
  l->receive(msg, wire_size(msg), nullptr);
  return caf::none;
}

net::chunk_place link_dispatch::chunk_landing(uint64_t request,
                                              uint64_t length) {
  auto l = link_.lock();
  if (!l)
    return {};
  return l->asks().place(request, length);
}

caf::error link_dispatch::on_chunk(uint64_t request, wire_bytes data,
                                   bool landed) {
  auto l = link_.lock();
  if (!l)
    return caf::none;
  pending_asks::answer x;
  x.data = std::move(data);
  x.landed = landed;
  answered(*l, request, std::move(x), pending_asks::kind::chunk);
  return caf::none;
}

void link_dispatch::answered(link_state& link, uint64_t request,
                             pending_asks::answer x, pending_asks::kind k,
                             bool failed) {
  if (!link.asks().complete(request, std::move(x), k, failed))
    link.count_unasked();
}

caf::error link_dispatch::on_frame(frame_type type,
                                   std::span<const std::byte> body) {
  auto l = link_.lock();
  if (!l || l->is_down())
    return caf::none;
  switch (type) {
  case frame_type::batch: {
    wire::reader in{body, "batch frame"};
    wire_batch batch;
    if (auto err = read_batch(in, batch, imports()))
      return err;
    delivery_batch scope;
    for (auto& msg : batch.messages)
      l->receive(msg, wire_size(msg), nullptr);
    return caf::none;
  }
  case frame_type::credit: {
    auto x = parse<credit>(body);
    if (!x)
      return std::move(x.error());
    l->on_credit(*x);
    return caf::none;
  }
  case frame_type::probe:
    l->on_probe();
    return caf::none;
  case frame_type::down: {
    auto x = parse<down_notice>(body);
    if (!x)
      return std::move(x.error());
    l->on_down(x->actor, x->reason, nullptr);
    return caf::none;
  }
  case frame_type::exit: {
    auto x = parse<exit_request>(body);
    if (!x)
      return std::move(x.error());
    if (auto target = l->addressable(x->actor)) {
      caf::actor_addr source;
      if (x->source != 0)
        if (auto proxy = l->sender_proxy(x->source))
          source = caf::actor_cast<caf::actor_addr>(*proxy);
      target->enqueue(nullptr, caf::make_message_id(),
                      caf::make_message(caf::exit_msg{source, x->reason}),
                      nullptr);
    }
    return caf::none;
  }
  case frame_type::link: {
    auto x = parse<link_request>(body);
    if (!x)
      return std::move(x.error());
    apply_link_request(*l, *x, nullptr);
    return caf::none;
  }
  case frame_type::refusal: {
    auto x = parse<refusal>(body);
    if (!x)
      return std::move(x.error());
    l->on_refusal(*x);
    return caf::none;
  }
  case frame_type::transfer_done: {
    auto x = parse<transfer_done>(body);
    if (!x)
      return std::move(x.error());
    l->finish_transfer(x->transfer);
    return caf::none;
  }
  case frame_type::chunk_request: {
    auto x = parse<chunk_request>(body);
    if (!x)
      return std::move(x.error());
    auto reply = l->serve_chunk(*x);
    if (reply)
      l->send_frame(
        chunk_frame(x->request, reply->data.bytes(), reply->data.keep_alive()));
    else
      l->send_control(failed_answer{x->request, std::move(reply.error())});
    return caf::none;
  }
  case frame_type::relay_request: {
    auto x = parse<relay_request>(body);
    if (!x)
      return std::move(x.error());
    // Answered now or, for bytes still on their way here, by the thread
    // that lands them (transfer/relay_source.hpp).
    auto length = x->length;
    auto request = x->request;
    host_.relays()->serve(
      *x, l->peer_name(),
      [link = std::weak_ptr<link_state>{l}, length,
       request](caf::expected<chunk_reply> reply) {
        auto l = link.lock();
        if (!l)
          return;
        if (reply) {
          l->count_relayed(length);
          l->send_frame(chunk_frame(request, reply->data.bytes(),
                                    reply->data.keep_alive()));
        } else {
          l->send_control(failed_answer{request, std::move(reply.error())});
        }
      });
    return caf::none;
  }
  case frame_type::lookup: {
    auto x = parse<lookup>(body);
    if (!x)
      return std::move(x.error());
    auto id = host_.lookup(x->name);
    if (!id) {
      l->send_control(failed_answer{x->request, std::move(id.error())});
      return caf::none;
    }
    // The peer is to hear when the actor it found ends (its proxy's
    // monitors and links depend on it).
    if (auto whom = host_.exposed(*id))
      l->export_actor(whom);
    l->send_control(actor_id_answer{x->request, *id});
    return caf::none;
  }
  case frame_type::spawn: {
    auto x = parse<spawn_request>(body);
    if (!x)
      return std::move(x.error());
    auto id = host_.spawn(*x, l);
    if (id)
      l->send_control(actor_id_answer{x->request, *id});
    else
      l->send_control(failed_answer{x->request, std::move(id.error())});
    return caf::none;
  }
  case frame_type::actor_id: {
    auto x = parse<actor_id_answer>(body);
    if (!x)
      return std::move(x.error());
    pending_asks::answer a;
    a.actor = x->actor;
    answered(*l, x->request, std::move(a), pending_asks::kind::actor);
    return caf::none;
  }
  case frame_type::failed: {
    auto x = parse<failed_answer>(body);
    if (!x)
      return std::move(x.error());
    pending_asks::answer a;
    a.error = x->reason ? std::move(x->reason)
                        : caf::make_error(errc::decode_failed,
                                          "node " + l->peer_name() +
                                            " answered a request with "
                                            "an empty error");
    answered(*l, x->request, std::move(a), pending_asks::kind::actor, true);
    return caf::none;
  }
  case frame_type::heartbeat:
    return caf::none;
  case frame_type::goodbye:
    host_.link_lost(l,
                    caf::make_error(errc::link_down,
                                    "node " + l->peer_name() + " shut down"));
    return caf::none;
  case frame_type::refuse: {
    // The node that did not decide the handshake refused it after all
    // (it found a link of its own meanwhile, or it stops).
    auto x = parse<refuse>(body);
    if (!x)
      return std::move(x.error());
    host_.link_lost(l, x->reason ? x->reason
                                 : caf::make_error(errc::handshake_failed,
                                                   "node " + l->peer_name() +
                                                     " refused the link"));
    return caf::none;
  }
  default:
    return caf::make_error(errc::decode_failed,
                           std::string{"node "} + l->peer_name() + " sent a " +
                             wire::name_of(type) +
                             " frame on a link (a handshake frame)");
  }
}

} // namespace ferry::detail
