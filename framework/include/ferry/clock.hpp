// clock: where a node reads the time.
//
// Every decision a node makes by elapsed time (a send that waits for credit
// up to `send-timeout`, a batch held for its gap, a heartbeat, a connection
// or handshake timeout, a rate-limited log line, a relay table's linger, the
// cluster's failure detector and downing) reads `now()` from one clock: the
// one `node_config::clock` names, the process's steady clock by default. A
// test gives its node a `manual_clock` and moves time with `advance`
// instead of sleeping through an interval. What measures real work or
// bounds real CPU (a histogram's timings, a ring reader's polling, the wait
// for sockets to drain at shutdown) reads `clock::steady()` itself.
//
// A thread or timer that waits for a time of a clock waits in real time for
// `real_wait(until - now())` and then reads `now()` again: the steady clock
// waits the whole span, a manual clock a millisecond at most, so a waiter
// notices `advance` at once.
//
// Usage:
//
//     auto time = std::make_shared<ferry::manual_clock>();
//     cfg.clock = time;
//     auto n = ferry::node::start(cfg);
//     ...
//     time->advance(std::chrono::seconds{31}); // past connection-timeout
//
// Thread-safety: `now()`, `real_wait()` and `manual_clock::advance` may be
// called from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>

namespace ferry {

class clock {
public:
  using time_point = std::chrono::steady_clock::time_point;
  using duration = std::chrono::steady_clock::duration;

  virtual ~clock() = default;

  /// Returns the current time.
  virtual time_point now() const noexcept = 0;

  /// Returns how long to wait in real time for `span` of this clock to
  /// pass before reading `now()` again (never negative).
  virtual duration real_wait(duration span) const noexcept = 0;

  /// Returns whether the clock moves by itself (the steady clock does; a
  /// manual clock moves only when told): a loop that spins until a time of
  /// this clock must pause between looks when it does not.
  virtual bool moves() const noexcept = 0;

  /// Returns the process's steady clock.
  static const clock& steady() noexcept;
};

/// A clock that stands still until `advance` moves it; it starts at the
/// steady clock's time when it was made.
class manual_clock final : public clock {
public:
  manual_clock() noexcept
    : ticks_(std::chrono::steady_clock::now().time_since_epoch().count()) {
    // nop
  }

  time_point now() const noexcept override {
    return time_point{duration{ticks_.load(std::memory_order_acquire)}};
  }

  duration real_wait(duration span) const noexcept override {
    return std::clamp(span, duration::zero(),
                      duration{std::chrono::milliseconds{1}});
  }

  bool moves() const noexcept override { return false; }

  /// Moves the clock forward by `by`.
  void advance(duration by) noexcept {
    ticks_.fetch_add(by.count(), std::memory_order_acq_rel);
  }

private:
  std::atomic<duration::rep> ticks_;
};

} // namespace ferry
