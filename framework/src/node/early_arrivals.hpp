// early_arrivals: what a peer sends before this node's side of the link
// exists.
//
// A handshake makes the two sides of a link one after the other: the node
// that receives a hello makes its side at once, in its gateway, and answers;
// the node that sent the hello makes its side when the answer comes back to
// the thread waiting in `connect`. In between, the first node may already
// send over its new link (its own `connect` to the peer finds that link and
// returns). Those messages reach a node without a link to their sender, and
// would be dropped as coming from a node that skipped the handshake.
//
// So a node expects its peer from the moment it sends its hello: messages of
// that peer that need a link and find none are held, in order, and handed
// back once the handshake ends (`release`): delivered when the link was
// made, dropped (and logged by the caller) when it failed. While held
// messages are handed back, later messages of that peer are held behind
// them, so order is kept.
//
// Held messages are bounded (`max_held` per peer): the peer has no credit
// yet, so a well-behaved peer sends at most its window; beyond the bound a
// message is dropped as if no handshake were under way.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the queues. `expects_any` is a lock-free check for the data
// path, which pays nothing while no handshake is under way.
#pragma once

#include <caf/mailbox_element.hpp>
#include <caf/node_id.hpp>

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>

namespace ferry::detail {

class early_arrivals {
public:
  /// Most messages held per peer.
  static constexpr size_t max_held = 16384;

  /// Hands one held message back.
  using deliver_fn = std::function<void(caf::mailbox_element_ptr)>;

  /// This node sent (or is about to send) its hello to `peer`: holds what
  /// `peer` sends without a link until `release`.
  void expect(const caf::node_id& peer);

  /// Returns whether any peer is expected or has messages held (a hint:
  /// `hold` decides).
  bool expects_any() const {
    return queues_.load(std::memory_order_acquire) > 0;
  }

  /// Takes `what`, a message from `from`, when `from` is expected and the
  /// message finds no link (`linked` false) or must queue behind held
  /// messages of `from`; returns whether it took it (`what` is then empty).
  bool hold(const caf::node_id& from, bool linked,
            caf::mailbox_element_ptr& what);

  /// Ends the wait for `peer`: hands every held message to `deliver` in
  /// order, also those that arrive meanwhile, then stops holding. Without
  /// `deliver` the messages are dropped. Returns how many there were.
  size_t release(const caf::node_id& peer, const deliver_fn& deliver);

private:
  struct queue {
    /// Callers of `expect` not yet released.
    size_t expecting = 0;
    /// A `release` is handing messages back.
    bool releasing = false;
    std::deque<caf::mailbox_element_ptr> held;
  };

  std::mutex mtx_;
  std::map<caf::node_id, queue> peers_;
  /// The size of `peers_`, readable without the lock.
  std::atomic<size_t> queues_{0};
};

} // namespace ferry::detail
