// gateway: dispatching what peers send (see node/gateway.hpp).
#include "node/gateway.hpp"

#include "link/actor_links.hpp"
#include "link/delivery_batch.hpp"
#include "link/link_state.hpp"
#include "link/remote_proxy.hpp"
#include "node/node_impl.hpp"
#include "wire/control.hpp"
#include "wire/message.hpp"

#include "ferry/errc.hpp"

#include <caf/actor_cast.hpp>
#include <caf/system_messages.hpp>

#include <array>
#include <typeinfo>

namespace ferry::detail {

namespace {

/// One message at the gateway, with what its handler needs.
struct call {
  gateway* self;
  node_impl& node;
  caf::mailbox_element& what;
  caf::execution_unit* host;

  /// The link of the sender's node, or null.
  std::shared_ptr<link_state> link() const {
    if (!what.sender)
      return nullptr;
    return node.find_link(what.sender->node());
  }

  /// The link of the sender's node when `x` carries its token (see
  /// wire/protocol.hpp), else null.
  template <class T>
  std::shared_ptr<link_state> link_of(const T& x, const char* what_came) const {
    auto l = link();
    return l && l->admits(x.token, what_came) ? l : nullptr;
  }

  /// Answers a request with `msg`.
  void respond(caf::message msg) const {
    if (what.sender && what.mid.is_request())
      what.sender->enqueue(caf::make_mailbox_element(self->ctrl(),
                                                     what.mid.response_id(),
                                                     {}, std::move(msg)),
                           host);
  }

  /// Answers a request with the value or the error of `x`.
  template <class T>
  void respond(caf::expected<T> x) const {
    respond(x ? caf::make_message(std::move(*x))
              : caf::make_message(std::move(x.error())));
  }

  /// Logs that `what_came` came from a node without a link.
  void unlinked(const std::string& what_came) const {
    auto from = what.sender ? "node " + caf::to_string(what.sender->node())
                            : std::string{"an anonymous sender"};
    node.log_unlinked("dropped " + what_came + " from " + from
                      + ", which has no link to this node (it skipped "
                        "ferry's handshake: connect with node::remote_actor)");
  }
};

void on_message(wire_message& msg, call& c) {
  auto l = c.link();
  if (!l)
    c.unlinked("a message");
  else if (l->admits(msg.token, "a message"))
    l->receive(msg, wire_size(msg), c.host);
}

void on_batch(wire_batch& batch, call& c) {
  auto l = c.link();
  if (!l) {
    c.unlinked("messages");
    return;
  }
  delivery_batch scope;
  for (auto& msg : batch.messages)
    if (l->admits(msg.token, "a message"))
      l->receive(msg, wire_size(msg), c.host);
}

void on_credit(credit& x, call& c) {
  if (auto l = c.link_of(x, "credit"))
    l->on_credit(x);
}

void on_probe(credit_probe& x, call& c) {
  if (auto l = c.link_of(x, "a credit probe"))
    l->on_probe();
}

void on_down(down_notice& x, call& c) {
  if (auto l = c.link_of(x, "a down notice"))
    l->on_down(x.actor, x.reason, c.host);
}

void on_exit(exit_request& x, call& c) {
  if (auto l = c.link_of(x, "an exit request"))
    if (auto target = l->addressable(x.actor))
      target->enqueue(nullptr, caf::make_message_id(),
                      caf::make_message(caf::exit_msg{
                        caf::actor_cast<caf::actor_addr>(c.what.sender),
                        x.reason}),
                      c.host);
}

void on_link_request(link_request& x, call& c) {
  if (auto l = c.link_of(x, "a link request"))
    apply_link_request(*l, x, c.host);
}

void on_refusal(refusal& x, call& c) {
  if (auto l = c.link_of(x, "a refusal"))
    l->on_refusal(x);
}

void on_chunk_request(chunk_request& x, call& c) {
  auto l = c.link_of(x, "a chunk request");
  c.respond(l ? l->serve_chunk(x)
              : caf::expected<chunk_reply>{caf::make_error(
                errc::link_down, "chunk request without a link (or without "
                                 "its token)")});
}

void on_relay_request(relay_request& x, call& c) {
  auto l = c.link_of(x, "a relay request");
  if (!l) {
    c.respond(caf::make_message(caf::make_error(
      errc::link_down, "relay request without a link (or without its "
                       "token)")));
    return;
  }
  // Answered now or, for bytes still on their way here, by the thread that
  // lands them (link/relay_source.hpp).
  auto length = x.length;
  c.node.relays()->serve(
    x, l->peer_name(),
    [sender = c.what.sender, mid = c.what.mid,
     gateway = caf::strong_actor_ptr{c.self->ctrl()},
     link = std::weak_ptr<link_state>{l},
     length](caf::expected<chunk_reply> reply) {
      if (reply)
        if (auto l = link.lock())
          l->count_relayed(length);
      if (!sender || !mid.is_request())
        return;
      auto msg = reply ? caf::make_message(std::move(*reply))
                       : caf::make_message(std::move(reply.error()));
      sender->enqueue(caf::make_mailbox_element(gateway, mid.response_id(),
                                                {}, std::move(msg)),
                      nullptr);
    });
}

void on_transfer_done(transfer_done& x, call& c) {
  if (auto l = c.link_of(x, "a transfer release"))
    l->finish_transfer(x.transfer);
}

void on_identify(identify&, call& c) {
  c.respond(caf::make_message(c.node.config().node_name));
}

void on_hello(hello& peer, call& c) {
  // A link is keyed by its peer's node: a hello naming another node's
  // gateway would take that node's link (or make links without end). A
  // hello of another version holds its version alone (hello::load), and
  // accept refuses it naming both.
  if (peer.protocol == wire_protocol_version
      && !(c.what.sender && peer.gateway
           && c.what.sender->node() == peer.gateway.node())) {
    c.respond(caf::expected<hello>{caf::make_error(
      errc::handshake_failed,
      "node " + peer.node_name
        + " sent a hello naming a gateway on another node than its own; "
          "connect with node::remote_actor")});
    return;
  }
  if (!c.node.tls()) {
    c.respond(c.node.accept(peer));
    return;
  }
  // A TLS node first finds the certificate of the connection the hello
  // came through, from CAF's middleman (on another actor: this thread may
  // be the one that answers).
  auto self = caf::actor_cast<caf::actor>(c.self->ctrl());
  auto sender = c.what.sender;
  auto mid = c.what.mid;
  c.node.find_connection(
    peer.gateway.node(),
    [self, sender, mid, peer](
      caf::expected<std::pair<std::string, uint16_t>> where) mutable {
      static_cast<gateway*>(caf::actor_cast<caf::abstract_actor*>(self))
        ->answer_hello(peer, sender, mid, std::move(where));
    });
}

void on_lookup(lookup& x, call& c) {
  auto id = c.node.lookup(x.name);
  // The peer is to hear when the actor it found ends (its proxy's monitors
  // and links depend on it).
  if (id)
    if (auto l = c.link())
      if (auto whom = c.node.exposed(*id))
        l->export_actor(whom);
  c.respond(std::move(id));
}

void on_spawn(spawn_request& x, call& c) {
  c.respond(c.node.spawn(x, c.what.sender));
}

/// A wire type and its handler.
struct route {
  const std::type_info* type;
  void (*run)(call&);
  /// Whether the handler needs its sender's link.
  bool needs_link;
};

template <class T, void (*Handler)(T&, call&)>
route route_to(bool needs_link) {
  return {&typeid(T),
          [](call& c) { Handler(c.what.content().get_mutable_as<T>(0), c); },
          needs_link};
}

// The data path first: most messages are user messages, batches and credit.
const std::array<route, 15> routes{
  route_to<wire_message, on_message>(true),
  route_to<wire_batch, on_batch>(true),
  route_to<credit, on_credit>(true),
  route_to<credit_probe, on_probe>(true),
  route_to<chunk_request, on_chunk_request>(true),
  route_to<transfer_done, on_transfer_done>(true),
  route_to<relay_request, on_relay_request>(true),
  route_to<down_notice, on_down>(true),
  route_to<exit_request, on_exit>(true),
  route_to<refusal, on_refusal>(true),
  route_to<link_request, on_link_request>(true),
  route_to<identify, on_identify>(false),
  route_to<hello, on_hello>(false),
  route_to<lookup, on_lookup>(false),
  route_to<spawn_request, on_spawn>(true),
};

/// Returns the handler of `content`, a message of one wire type, or null.
const route* route_of(const caf::type_erased_tuple& content) {
  if (content.size() != 1)
    return nullptr;
  auto rtti = content.type(0);
  if (rtti.second == nullptr)
    return nullptr;
  for (auto& r : routes)
    if (*r.type == *rtti.second)
      return &r;
  return nullptr;
}

} // namespace

gateway::gateway(caf::actor_config& cfg, node_impl* node)
  : caf::monitorable_actor(cfg), node_(node) {
  // nop
}

void gateway::detach_node() {
  node_.store(nullptr);
  // The node's links are down by now: no call waits for credit.
  calls_.wait_idle();
}

void gateway::enqueue(caf::mailbox_element_ptr what,
                      caf::execution_unit* host) {
  // Either detach_node waits for this call or this call sees no node.
  activity_counter::scope guard{calls_};
  auto node = node_.load();
  if (node == nullptr) {
    fail_request(this, *what,
                 caf::make_error(errc::link_down, "the node shut down"), host);
    return;
  }
  auto* r = route_of(what->content());
  if (r == nullptr) {
    fail_request(this, *what,
                 caf::make_error(errc::decode_failed,
                                 "the gateway accepts ferry's wire types only"),
                 host);
    return;
  }
  // A peer this node is making a link with may send before this node's
  // side exists (and, while that is handed on, after): hold it.
  if (r->needs_link && what->sender && node->early().expects_any()) {
    auto from = what->sender->node();
    if (node->early().hold(from, node->find_link(from) != nullptr, what))
      return;
  }
  call c{this, *node, *what, host};
  r->run(c);
}

void gateway::answer_hello(
  const hello& peer, const caf::strong_actor_ptr& sender, caf::message_id mid,
  caf::expected<std::pair<std::string, uint16_t>> where) {
  activity_counter::scope guard{calls_};
  auto node = node_.load();
  caf::expected<hello> answer{caf::error{}};
  if (node == nullptr)
    answer = caf::make_error(errc::link_down, "the node shut down");
  else if (!where)
    answer = caf::make_error(errc::handshake_failed,
                             "cannot find the connection of node '"
                               + peer.node_name + "': "
                               + render(where.error()));
  else if (auto err = node->verify_peer(where->first, where->second,
                                        peer.node_name))
    answer = std::move(err);
  else
    answer = node->accept(peer);
  if (!sender || !mid.is_request())
    return;
  auto msg = answer ? caf::make_message(std::move(*answer))
                    : caf::make_message(std::move(answer.error()));
  sender->enqueue(caf::make_mailbox_element(ctrl(), mid.response_id(), {},
                                            std::move(msg)),
                  nullptr);
}

void gateway::replay(caf::mailbox_element_ptr what) {
  activity_counter::scope guard{calls_};
  auto node = node_.load();
  if (node == nullptr)
    return;
  if (auto* r = route_of(what->content())) {
    call c{this, *node, *what, nullptr};
    r->run(c);
  }
}

} // namespace ferry::detail
