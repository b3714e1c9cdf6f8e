// gateway: receives everything peers send to this node.
//
// Handshakes, user messages, credit, down notices, chunk requests: every
// wire type arrives at the gateway, the actor a node publishes on its port.
// It overrides `enqueue` and does its work on the calling thread, the
// middleman's (nodes run without BASP workers, `middleman.workers` = 0),
// like CAF's forwarding proxies: no scheduling hop, and credit never waits
// for a scheduler thread (so a sender blocked on credit cannot starve it).
// It never blocks. Each wire type has its handler, found in a table by the
// message's type; what belongs to a link is passed on only when it carries
// the link's token. What belongs to a link that does not exist yet, from a
// peer this node is making a link with, waits in the node's early arrivals
// and comes back through `replay`.
//
// Thread-safety: `enqueue` may run on any thread. `detach_node` waits until
// no `enqueue` uses the node any more (CAF's threads may be inside it when
// the node goes).
#pragma once

#include "activity_counter.hpp"
#include "wire/control.hpp"

#include <caf/actor_config.hpp>
#include <caf/execution_unit.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/monitorable_actor.hpp>

#include <atomic>
#include <string>
#include <utility>

namespace ferry::detail {

class node_impl;

class gateway final : public caf::monitorable_actor {
public:
  gateway(caf::actor_config& cfg, node_impl* node);

  void enqueue(caf::mailbox_element_ptr what,
               caf::execution_unit* host) override;

  const char* name() const override { return "ferry.gateway"; }

  /// Detaches from the node (called while the node shuts down) and returns
  /// once no `enqueue` still uses it.
  void detach_node();

  /// Handles `what`, held while the handshake with its sender was under way
  /// (node/early_arrivals.hpp), as if it came now; on the calling thread.
  void replay(caf::mailbox_element_ptr what);

  /// Answers the `hello` request `mid` of `sender` on a TLS node, once the
  /// address and port of its connection are known: refuses a peer whose
  /// certificate does not name it, else accepts as `enqueue` does.
  void answer_hello(const hello& peer, const caf::strong_actor_ptr& sender,
                    caf::message_id mid,
                    caf::expected<std::pair<std::string, uint16_t>> where);

private:
  std::atomic<node_impl*> node_;
  /// `enqueue` calls running now (they load `node_` after entering, so once
  /// `detach_node` saw none, none has the node).
  activity_counter calls_;
};

} // namespace ferry::detail
