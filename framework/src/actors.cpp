// remote_proxy and gateway: ferry's two custom CAF actors.
//
// Both override `enqueue` and do their work on the calling thread, like CAF's
// forwarding_actor_proxy. The proxy runs on the sender's thread (encode and
// send); the gateway runs on the thread that reads CAF's messages (decode
// and deliver): the middleman's, since nodes run without BASP workers
// (`middleman.workers` = 0, config.cpp), and never blocks.
#include "detail/node_impl.hpp"

#include "ferry/errc.hpp"

#include <caf/actor_cast.hpp>
#include <caf/exit_reason.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/system_messages.hpp>

#include <chrono>
#include <thread>

namespace ferry::detail {

// -- remote_proxy -------------------------------------------------------------

remote_proxy::remote_proxy(caf::actor_config& cfg,
                           std::weak_ptr<link_state> link, uint64_t remote_id)
  : caf::monitorable_actor(cfg), link_(std::move(link)), remote_id_(remote_id) {
  // nop
}

namespace {

/// Answers a request with `err` (CAF's `bounce` always answers
/// `request_receiver_down`, losing the reason).
void fail_request(caf::abstract_actor* self, caf::mailbox_element& what,
                  caf::error err, caf::execution_unit* host) {
  if (what.sender && what.mid.is_request())
    what.sender->enqueue(caf::make_mailbox_element(self->ctrl(),
                                                   what.mid.response_id(), {},
                                                   std::move(err)),
                         host);
}

} // namespace

void remote_proxy::enqueue(caf::mailbox_element_ptr what,
                           caf::execution_unit* host) {
  auto link = link_.lock();
  if (!link || link->is_down()) {
    fail_request(this, *what,
                 caf::make_error(errc::link_down,
                                 link ? "the link to node " + link->peer_name()
                                          + " is down"
                                      : std::string{"the link to the actor's "
                                                    "node is gone"}),
                 host);
    return;
  }
  if (getf(is_terminated_flag)) {
    // The remote actor ended (a down_notice), its node is still connected.
    std::string reason;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      reason = render(fail_state_);
    }
    fail_request(this, *what,
                 caf::make_error(errc::no_such_actor,
                                 "actor " + std::to_string(remote_id_)
                                   + " on node " + link->peer_name()
                                   + " has terminated (" + reason + ")"),
                 host);
    return;
  }
  if (what->content().match_elements<caf::exit_msg>()) {
    // send_exit to a proxy terminates the remote actor.
    auto& msg = what->content().get_as<caf::exit_msg>(0);
    link->send_control(exit_request{remote_id_, msg.reason}, host);
    return;
  }
  auto sender = what->sender;
  auto err = link->send(remote_id_, sender, what->mid,
                        what->move_content_to_message(), host);
  if (!err)
    return;
  if (what->mid.is_request()) {
    fail_request(this, *what, std::move(err), host);
  } else {
    link->log_limited(link_state::log_topic::send_failed,
                      "could not send a message to node " + link->peer_name()
                        + ": " + render(err));
  }
}

void remote_proxy::kill(caf::error reason, caf::execution_unit* host) {
  cleanup(std::move(reason), host);
}

// -- gateway ------------------------------------------------------------------

namespace {

void respond(caf::abstract_actor* self, caf::mailbox_element& what,
             caf::message msg, caf::execution_unit* host) {
  if (what.sender && what.mid.is_request())
    what.sender->enqueue(caf::make_mailbox_element(
                           self->ctrl(), what.mid.response_id(), {},
                           std::move(msg)),
                         host);
}

} // namespace

gateway::gateway(caf::actor_config& cfg, node_impl* node)
  : caf::monitorable_actor(cfg), node_(node) {
  // nop
}

void gateway::detach_node() {
  node_.store(nullptr);
  // The node's links are down by now: no call waits for credit.
  while (in_flight_.load() != 0)
    std::this_thread::sleep_for(std::chrono::microseconds{100});
}

namespace {

/// What the log says of `what` (wire messages) from a node without a link.
std::string unlinked_text(const caf::mailbox_element& what,
                          const std::string& what_came) {
  auto from = what.sender ? "node " + caf::to_string(what.sender->node())
                          : std::string{"an anonymous sender"};
  return "dropped " + what_came + " from " + from
         + ", which has no link to this node (it skipped ferry's "
           "handshake: connect with node::remote_actor)";
}

} // namespace

void gateway::enqueue(caf::mailbox_element_ptr what,
                      caf::execution_unit* host) {
  // Sequentially consistent, with detach_node's store and load: either
  // detach_node waits for this call or this call sees no node.
  in_flight_.fetch_add(1);
  struct leave {
    std::atomic<uint32_t>& count;
    ~leave() { count.fetch_sub(1); }
  } guard{in_flight_};
  auto node = node_.load();
  if (node == nullptr) {
    fail_request(this, *what, caf::make_error(errc::link_down,
                                              "the node shut down"),
                 host);
    return;
  }
  auto& content = what->content();
  auto link = [&]() -> std::shared_ptr<link_state> {
    if (!what->sender)
      return nullptr;
    return node->find_link(what->sender->node());
  };
  // The link of the sender's node when `x` carries its token (see
  // wire_protocol_version), else null.
  auto link_of = [&](const auto& x, const char* what_came) {
    auto l = link();
    return l && l->admits(x.token, what_came) ? l : nullptr;
  };
  if (content.match_elements<wire_message>()) {
    auto& msg = content.get_mutable_as<wire_message>(0);
    if (auto l = link()) {
      if (l->admits(msg.token, "a message"))
        l->receive(msg, wire_size(msg), host);
    } else {
      node->log_unlinked(unlinked_text(*what, "a message"));
    }
  } else if (content.match_elements<wire_batch>()) {
    auto& batch = content.get_mutable_as<wire_batch>(0);
    if (auto l = link()) {
      for (auto& msg : batch.messages)
        if (l->admits(msg.token, "a message"))
          l->receive(msg, wire_size(msg), host);
    } else {
      node->log_unlinked(unlinked_text(*what, "messages"));
    }
  } else if (content.match_elements<credit>()) {
    auto& x = content.get_as<credit>(0);
    if (auto l = link_of(x, "credit"))
      l->on_credit(x);
  } else if (content.match_elements<credit_probe>()) {
    if (auto l = link_of(content.get_as<credit_probe>(0), "a credit probe"))
      l->on_probe();
  } else if (content.match_elements<down_notice>()) {
    auto& notice = content.get_as<down_notice>(0);
    if (auto l = link_of(notice, "a down notice"))
      l->on_down(notice.actor, notice.reason, host);
  } else if (content.match_elements<exit_request>()) {
    auto& req = content.get_as<exit_request>(0);
    if (auto l = link_of(req, "an exit request")) {
      if (auto target = l->exported(req.actor))
        target->enqueue(nullptr, caf::make_message_id(),
                        caf::make_message(caf::exit_msg{
                          caf::actor_cast<caf::actor_addr>(what->sender),
                          req.reason}),
                        host);
    }
  } else if (content.match_elements<refusal>()) {
    auto& x = content.get_as<refusal>(0);
    if (auto l = link_of(x, "a refusal")) {
      // Counted after the log line, so whoever sees the count sees the line.
      l->log_limited(link_state::log_topic::refused_by_peer,
                     "node " + l->peer_name() + " refused a message: "
                       + render(x.reason));
      ++l->counters().refused_by_peer;
    }
  } else if (content.match_elements<chunk_request>()) {
    auto& req = content.get_as<chunk_request>(0);
    auto l = link_of(req, "a chunk request");
    auto chunk = l ? l->serve_chunk(req)
                   : caf::expected<chunk_reply>{caf::make_error(
                     errc::link_down, "chunk request without a link (or "
                                      "without its token)")};
    respond(this, *what,
            chunk ? caf::make_message(std::move(*chunk))
                  : caf::make_message(std::move(chunk.error())),
            host);
  } else if (content.match_elements<transfer_done>()) {
    auto& x = content.get_as<transfer_done>(0);
    if (auto l = link_of(x, "a transfer release"))
      l->finish_transfer(x.transfer);
  } else if (content.match_elements<identify>()) {
    respond(this, *what, caf::make_message(node->config().node_name), host);
  } else if (content.match_elements<hello>()) {
    // A link is keyed by its peer's node: a hello naming another node's
    // gateway would take that node's link (or make links without end).
    auto& peer = content.get_as<hello>(0);
    caf::expected<hello> reply = caf::make_error(
      errc::handshake_failed,
      "node " + peer.node_name
        + " sent a hello naming a gateway on another node than its own; "
          "connect with node::remote_actor");
    // A hello of another version holds its version alone (hello::load):
    // accept refuses it naming both.
    if (peer.protocol != wire_protocol_version
        || (what->sender && peer.gateway
            && what->sender->node() == peer.gateway.node()))
      reply = node->accept(peer, host);
    respond(this, *what,
            reply ? caf::make_message(std::move(*reply))
                  : caf::make_message(std::move(reply.error())),
            host);
  } else if (content.match_elements<lookup>()) {
    auto id = node->lookup(content.get_as<lookup>(0).name);
    respond(this, *what,
            id ? caf::make_message(*id)
               : caf::make_message(std::move(id.error())),
            host);
  } else if (content.match_elements<spawn_request>()) {
    auto reply = node->spawn(content.get_mutable_as<spawn_request>(0),
                             what->sender, host);
    respond(this, *what,
            reply ? caf::make_message(*reply)
                  : caf::make_message(std::move(reply.error())),
            host);
  } else {
    fail_request(this, *what,
                 caf::make_error(errc::decode_failed,
                                 "the gateway accepts ferry's wire types only"),
                 host);
  }
}

} // namespace ferry::detail
