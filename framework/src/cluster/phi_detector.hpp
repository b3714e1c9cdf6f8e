// phi_detector: the phi-accrual failure detector of one watched member.
//
// Hayashibara et al.'s detector, as Akka and Cassandra run it: the watcher
// keeps the last `max_samples` intervals between heartbeats from one member
// and, at any moment, turns the time since the last heartbeat into phi, the
// negative decimal logarithm of the chance that a heartbeat this late is
// still coming (a normal distribution of the intervals, its mean raised by
// the acceptable pause, its deviation at least `min_std_deviation`). phi 1
// means a 10 % chance of being wrong when calling the member unreachable,
// phi 8 about one in 10^8. A member whose heartbeats slow down under load
// raises the mean and the deviation with them, so a loaded node is not called
// unreachable for being slow, only for being much slower than it has been.
//
// Before the first heartbeat the detector knows nothing and reports phi 0;
// the first heartbeat seeds the history with `first_estimate` (two samples,
// one deviation apart) so that a member that never sends a second heartbeat
// still becomes unreachable.
//
// Time is passed in by the caller (no clock is read here), so tests drive it
// without sleeping. Thread-safety: none; its owner serializes the calls.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>

namespace ferry::detail {

class phi_detector {
public:
  using clock = std::chrono::steady_clock;
  using duration = clock::duration;

  struct settings {
    /// Intervals kept (the oldest goes first).
    size_t max_samples = 1000;
    /// The smallest deviation assumed: heartbeats that came like clockwork
    /// must not make a few milliseconds of lateness look fatal.
    duration min_std_deviation = std::chrono::milliseconds{100};
    /// Added to the mean: a pause (a collection, a stolen core) this long
    /// costs no phi.
    duration acceptable_pause = std::chrono::seconds{3};
    /// The interval assumed before the second heartbeat (the heartbeat
    /// interval the member is configured with).
    duration first_estimate = std::chrono::seconds{1};
  };

  explicit phi_detector(settings cfg);

  /// Records a heartbeat that arrived at `now`.
  void heartbeat(clock::time_point now);

  /// Returns phi at `now`: 0 before the first heartbeat, growing with the
  /// time since the last one.
  [[nodiscard]] double phi(clock::time_point now) const;

  /// Returns whether phi at `now` is below `threshold`.
  [[nodiscard]] bool available(clock::time_point now, double threshold) const {
    return phi(now) < threshold;
  }

  /// Returns the mean interval between heartbeats, in seconds (0 before the
  /// first heartbeat).
  [[nodiscard]] double mean_interval() const;

  /// Returns the number of intervals kept.
  [[nodiscard]] size_t samples() const noexcept { return intervals_.size(); }

private:
  void add(double interval_ms);

  settings cfg_;
  std::optional<clock::time_point> last_;
  std::deque<double> intervals_; // milliseconds
  double sum_ = 0;
  double squares_ = 0;
};

} // namespace ferry::detail
