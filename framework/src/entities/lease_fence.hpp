// lease_fence: until when a member may run a shard's entities, shared by the
// member's entity host and the shard's activations.
//
// The host moves the fence each time it takes or renews the shard's lease
// (to the lease's end as seen from when the call left, less the margin) and
// closes it when it drops the shard. An activation looks at the fence before
// each message it is sent (not the answers to its own loads and saves): a
// member that was paused past its lease (SIGSTOP, a frozen VM, swapping)
// finds the fence passed on waking and its activations refuse what their
// mailboxes hold, instead of acting beside the shard's next holder until the
// host's timer drops the shard.
//
// Thread-safety: `hold_until` and `close` from the host's actor, `passed`
// from any thread.
#pragma once

#include "ferry/clock.hpp"

#include <atomic>

namespace ferry::detail {

struct lease_fence {
  explicit lease_fence(const clock& time) : time(&time) {
    // nop
  }

  /// Lets the shard's activations act until `t`.
  void hold_until(clock::time_point t) noexcept {
    until.store(t.time_since_epoch().count(), std::memory_order_release);
  }

  /// Stops the shard's activations from acting at all.
  void close() noexcept { until.store(0, std::memory_order_release); }

  /// Returns whether the lease may have run out.
  bool passed() const noexcept {
    return time->now().time_since_epoch().count() >=
           until.load(std::memory_order_acquire);
  }

  const clock* time;
  std::atomic<clock::duration::rep> until{0};
};

} // namespace ferry::detail
