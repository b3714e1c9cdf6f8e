// router: where this node sends the messages for each shard, in order.
//
// The messages a node's program sends to entities (through handles from
// `entities::ref`) leave on the sender's thread: the router looks up the
// member holding the key's shard in the host's latest `routes` and hands
// each message to that member's host, keeping the sender and message id (a
// request's answer goes from the entity straight back). What one sender
// sends one entity arrives in the order sent, also while the shard moves:
// when the owner the router sends a shard's messages to changes, it sends a
// `flush` along the old way and holds the shard's messages (up to
// `max_buffered`; more are refused with `entity_unavailable`) until the
// holder answers `ready` (everything sent the old way was delivered), or the
// old way timed out (`expire`: its member is gone, and so is what it held).
// Then it sends what it held, and what comes after, the new way.
//
// A shard whose owner is unknown yet (no member up, or its host not met)
// goes to this node's own host, which holds it and passes it on.
//
// Thread-safety: every member function may be called from any thread; each
// shard has its own lock, held while a message is handed on (so a sender
// that waits for credit on a link holds up only that shard's senders).
#pragma once

#include "clock.hpp"
#include "thread_safety.hpp"

#include <caf/actor.hpp>
#include <caf/execution_unit.hpp>
#include <caf/mailbox_element.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

namespace ferry::detail::entities {

/// Where each shard's messages go, as the host last saw the cluster.
struct routes {
  /// This member's incarnation, and its host.
  uint64_t self = 0;
  caf::actor self_host;
  /// The owner (incarnation) of each shard; 0 while none is known.
  std::vector<uint64_t> owner;
  /// The hosts of the members this node met (its own included).
  std::unordered_map<uint64_t, caf::actor> hosts;

  /// Returns the actor that takes a message for `shard` now: its owner's
  /// host, or this node's own while that is unknown.
  caf::actor way_of(uint32_t shard) const;
};

class router {
public:
  router(uint32_t shards, uint64_t max_buffered, const clock& time,
         clock::duration flush_timeout);

  ~router();

  /// Makes `x` the routes from now on.
  void set_routes(std::shared_ptr<const routes> x);

  /// Returns the routes in use.
  std::shared_ptr<const routes> current() const;

  /// Sends `what`, a call for an entity of `shard`, on its way.
  void route(uint32_t shard, caf::mailbox_element_ptr what,
             caf::execution_unit* ctx);

  /// The holder of `shard` delivered everything sent before flush `token`.
  void ready(uint32_t shard, uint64_t token, caf::execution_unit* ctx);

  /// Gives up on flushes older than the flush timeout: what they held goes
  /// the new way.
  void expire(caf::execution_unit* ctx);

  /// Gives up on the flushes through `way`, a host that is gone (what it
  /// held went with it), and flushes nothing through it later.
  void gone(const caf::actor& way, caf::execution_unit* ctx);

  /// Returns once every message routed by the routes before the latest
  /// `set_routes` was handed on (later ones follow the new routes).
  void barrier();

  /// Returns the messages held while flushes run.
  uint64_t held() const;

private:
  struct lane {
    mutex mtx;
    /// Where the shard's messages went last (null: nowhere yet).
    caf::actor via FERRY_GUARDED_BY(mtx);
    /// A flush runs: messages wait in `waiting`.
    bool flushing FERRY_GUARDED_BY(mtx) = false;
    uint64_t token FERRY_GUARDED_BY(mtx) = 0;
    clock::time_point since FERRY_GUARDED_BY(mtx);
    std::deque<caf::mailbox_element_ptr> waiting FERRY_GUARDED_BY(mtx);
  };

  /// Sends what `l` holds the way `shard` goes now, and ends its flush.
  void finish_flush(uint32_t shard, lane& l, caf::execution_unit* ctx)
    FERRY_REQUIRES(l.mtx);

  const uint64_t max_buffered_;
  const clock& time_;
  const clock::duration flush_timeout_;
  std::unique_ptr<lane[]> lanes_;
  const uint32_t shards_;
  std::atomic<std::shared_ptr<const routes>> routes_;
  std::atomic<uint64_t> next_token_{0};
  std::atomic<uint64_t> held_{0};
};

/// Answers the request `what` (if it is one) with `err`.
void refuse_call(caf::mailbox_element& what, caf::error err,
                 caf::execution_unit* ctx);

} // namespace ferry::detail::entities
