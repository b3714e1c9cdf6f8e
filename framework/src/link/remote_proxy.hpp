// remote_proxy: stands for one actor of a peer node.
//
// Anything enqueued to a proxy is encoded and sent over its link, on the
// sender's thread (the way CAF's own forwarding proxies work: no extra
// scheduling hop). A request that cannot be sent is answered with the
// reason at once; a one-way message that cannot be sent is logged and
// counted. An exit message sent to a proxy terminates the remote actor.
// The proxy terminates when the remote actor does (a `down_notice`) or the
// link goes down, so `monitor` works as in CAF. Linking a local actor to a
// proxy links it to the remote actor (link/actor_links.hpp).
//
// Thread-safety: `enqueue` may be called from any thread, like any actor's.
// The link is held weakly: a proxy outliving its link answers `link_down`.
#pragma once

#include <caf/actor_config.hpp>
#include <caf/error.hpp>
#include <caf/execution_unit.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/monitorable_actor.hpp>
#include <caf/system_messages.hpp>

#include <cstdint>
#include <memory>

namespace ferry::detail {

class link_state;

class remote_proxy final : public caf::monitorable_actor {
public:
  remote_proxy(caf::actor_config& cfg, std::weak_ptr<link_state> link,
               uint64_t remote_id);

  void enqueue(caf::mailbox_element_ptr what,
               caf::execution_unit* host) override;

  const char* name() const override { return "ferry.remote_proxy"; }

  /// Records a link with the local actor `x` and asks the peer to link the
  /// remote actor with `x` (unless `quiet_link_changes`). Called by CAF
  /// under both actors' locks.
  bool add_backlink(caf::abstract_actor* x) override;

  /// Removes a link with `x`, and asks the peer to do the same.
  bool remove_backlink(caf::abstract_actor* x) override;

  /// Terminates the proxy: monitors get a down message with `reason`.
  void kill(caf::error reason, caf::execution_unit* host);

  /// Returns the actor id on the peer node.
  uint64_t remote_id() const { return remote_id_; }

  /// Returns whether this proxy stands for an actor of `link`'s peer.
  bool serves(const link_state* link) const {
    return link_.lock().get() == link;
  }

private:
  /// Asks the peer to link (or unlink) the remote actor with the local actor
  /// `x`, unless the peer asked for the change itself.
  void tell_peer(caf::abstract_actor* x, bool establish);

  /// Whether `msg` is the exit message of a linked actor that ended (the
  /// link is then gone); the peer learns of that end from its down notice.
  bool ends_link(const caf::exit_msg& msg);

  std::weak_ptr<link_state> link_;
  uint64_t remote_id_;
};

/// Terminates the remote_proxy `proxy` with `reason`.
void kill_proxy(const caf::strong_actor_ptr& proxy, caf::error reason,
                caf::execution_unit* host);

/// Answers the request `what` (if it is one) with `err`, as `self` (CAF's
/// `bounce` always answers `request_receiver_down`, losing the reason).
void fail_request(caf::abstract_actor* self, caf::mailbox_element& what,
                  caf::error err, caf::execution_unit* host);

} // namespace ferry::detail
