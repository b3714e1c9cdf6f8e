// A snapshot of one histogram a node keeps (encode and decode times per
// family, messages per batch), as read from code through `link_stats`.
//
// Plain values. The buckets are fixed when the node is built; the counts
// keep moving while the link carries traffic, so a snapshot is exact per
// bucket but not atomic across buckets.
#pragma once

#include <cstdint>
#include <vector>

namespace ferry {

/// Observations counted in fixed buckets, as Prometheus' histograms.
struct histogram_stats {
  /// Upper bounds of the buckets, ascending, in the observed unit (seconds
  /// for times, messages for batch sizes).
  std::vector<double> bounds;
  /// Observations per bucket (not cumulative): `counts[i]` counts those
  /// above `bounds[i - 1]` and at most `bounds[i]`; the last entry, one
  /// more than `bounds`, counts those above every bound.
  std::vector<uint64_t> counts;
  /// Sum of all observations, in the observed unit.
  double sum = 0;
  /// Number of observations (the sum of `counts`).
  uint64_t count = 0;
};

} // namespace ferry
