// histogram: observations counted in fixed buckets, lock-free.
//
// The data path observes values (nanoseconds, message counts) with relaxed
// atomic increments: one for the bucket, one for the sum, no lock. A
// snapshot reads each bucket once, so it is exact per bucket but not atomic
// across buckets (an observation may show in the sum and not yet in its
// bucket); Prometheus tolerates that, and the next scrape catches up.
//
// The buckets are one of two fixed layouts (`histogram::layout`), chosen
// when the histogram is made: times from 1 us to 10 s, or counts from 1 to
// 256. Values are integers; the snapshot scales them to the unit shown
// (seconds for times).
//
// Thread-safety: `observe` and `snapshot` may be called from any thread,
// also at once.
#pragma once

#include "ferry/histogram_stats.hpp"

#include "clock.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>

namespace ferry::detail {

/// Nanoseconds from `start` to now on the steady clock (what the timing
/// histograms and counters take: real work, not a node's time).
inline uint64_t nanos_since(clock::time_point start) {
  return static_cast<uint64_t>(
    std::chrono::duration_cast<std::chrono::nanoseconds>(clock::steady().now() -
                                                         start)
      .count());
}

class histogram {
public:
  /// The bucket layouts.
  enum class layout {
    /// Durations in nanoseconds, shown in seconds: 1 us to 10 s.
    nanoseconds,
    /// Counts (messages per batch): 1 to 256 in powers of two.
    count,
  };

  explicit histogram(layout kind = layout::nanoseconds) noexcept;

  histogram(const histogram&) = delete;
  histogram& operator=(const histogram&) = delete;

  /// Counts one observation of `value` (in the layout's integer unit).
  void observe(uint64_t value) noexcept;

  /// Returns true if nothing was observed yet.
  bool empty() const noexcept;

  /// Returns the buckets, sum and count, scaled to the unit shown.
  histogram_stats snapshot() const;

  /// Most buckets of any layout, the one above every bound included.
  static constexpr size_t max_buckets = 16;

private:
  std::span<const uint64_t> bounds_;
  double scale_;
  std::array<std::atomic<uint64_t>, max_buckets> counts_{};
  std::atomic<uint64_t> sum_{0};
};

} // namespace ferry::detail
