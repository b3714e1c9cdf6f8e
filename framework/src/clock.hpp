// clock: where the framework's timers and rate limits read the time.
//
// A part that decides by elapsed time (a log limiter's interval, a relay
// table's linger and grace, an expiry) reads `now()` from the clock it was
// given instead of from std::chrono::steady_clock, so that a test can drive
// it with a `manual_clock` and check an interval without sleeping through
// it. The node's parts take `clock::steady()`, the real steady clock.
//
// Thread-safety: `now()` and `manual_clock::advance` may be called from any
// thread.
#pragma once

#include <atomic>
#include <chrono>

namespace ferry::detail {

class clock {
public:
  using time_point = std::chrono::steady_clock::time_point;
  using duration = std::chrono::steady_clock::duration;

  virtual ~clock() = default;

  /// Returns the current time.
  virtual time_point now() const noexcept = 0;

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

  /// Moves the clock forward by `by`.
  void advance(duration by) noexcept {
    ticks_.fetch_add(by.count(), std::memory_order_acq_rel);
  }

private:
  std::atomic<duration::rep> ticks_;
};

} // namespace ferry::detail
