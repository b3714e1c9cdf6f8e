// rate_history: what a node did per second over the last minutes, for the
// dashboard's charts.
//
// `sample` takes the node's figures (its counters, which only grow while a
// link lives) once per interval and keeps the differences as rates: per
// serialization family, messages sent and received per second and the mean
// time to encode and decode one element; per link, messages and bytes per
// second each way; and the host store's fill. A link that went down and
// came back starts its counters at zero: a counter that went backwards
// counts from zero, never as a negative rate. The oldest sample goes once
// `capacity` are kept.
//
// Thread-safety: none; the metrics server's thread owns it.
#pragma once

#include "metrics/exposition.hpp"

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>

namespace ferry::detail {

/// Messages and bytes per second on one link, each way.
struct link_rates {
  double messages_sent = 0;
  double messages_received = 0;
  double bytes_sent = 0;
  double bytes_received = 0;
};

/// One family's rates over one interval.
struct family_rates {
  double sent = 0;
  double received = 0;
  /// Mean seconds per element encoded or decoded in the interval (absent:
  /// none was).
  std::optional<double> encode_seconds;
  std::optional<double> decode_seconds;
};

/// The host store's fill at one sample.
struct store_fill {
  uint64_t capacity = 0;
  uint64_t used = 0;
  uint64_t pinned = 0;
  uint64_t spilled = 0;
  uint64_t objects = 0;
};

/// One sample: the rates of the interval that ended at `unix_ms`.
struct rate_sample {
  /// Milliseconds since the Unix epoch.
  int64_t unix_ms = 0;
  std::map<std::string, family_rates> families;
  std::optional<store_fill> store;
};

class rate_history {
public:
  explicit rate_history(size_t capacity = 300) : capacity_(capacity) {}

  /// Takes the figures of `now_ms` (Unix milliseconds; monotonic enough
  /// between two calls) and keeps the rates since the last call.
  void sample(const node_figures& x, int64_t now_ms);

  /// Returns the samples kept, oldest first.
  const std::deque<rate_sample>& samples() const { return samples_; }

  /// Returns the rates of each link over the last interval, by peer.
  const std::map<std::string, link_rates>& links() const { return links_; }

private:
  /// What one link's counters were at the last sample.
  struct link_counts {
    uint64_t messages_sent = 0;
    uint64_t messages_received = 0;
    uint64_t bytes_sent = 0;
    uint64_t bytes_received = 0;
    std::map<std::string, uint64_t> sent_by_family;
    std::map<std::string, uint64_t> received_by_family;
    /// Count and sum of the encode and decode histograms, by family.
    std::map<std::string, std::pair<uint64_t, double>> encode;
    std::map<std::string, std::pair<uint64_t, double>> decode;
  };

  static link_counts counts_of(const link_stats& x);

  size_t capacity_;
  std::deque<rate_sample> samples_;
  std::map<std::string, link_rates> links_;
  std::map<std::string, link_counts> last_;
  int64_t last_ms_ = 0;
};

} // namespace ferry::detail
