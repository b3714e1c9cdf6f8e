// link_counters and family_counters: what a link counts for `link_stats`.
//
// Plain atomic counters, written on the data path without locks (relaxed
// increments) and read by `link_state::snapshot`. A snapshot is not atomic
// across counters: each figure is exact, their sum at one instant is not.
//
// Thread-safety: every member may be used from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::detail {

/// Atomic counters behind `link_stats` (see ferry/link_stats.hpp for what
/// each one counts).
struct link_counters {
  std::atomic<uint64_t> messages_sent{0};
  std::atomic<uint64_t> messages_received{0};
  std::atomic<uint64_t> bytes_inline_sent{0};
  std::atomic<uint64_t> bytes_inline_received{0};
  std::atomic<uint64_t> bytes_spilled_sent{0};
  std::atomic<uint64_t> bytes_spilled_received{0};
  std::atomic<uint64_t> bytes_pulled_by_peer{0};
  std::atomic<uint64_t> bytes_pulled{0};
  std::atomic<uint64_t> refusals{0};
  std::atomic<uint64_t> refused_by_peer{0};
  std::atomic<uint64_t> send_errors{0};
  std::atomic<uint64_t> credit_waits{0};
  std::atomic<uint64_t> peak_in_flight_bytes{0};
  std::atomic<uint64_t> credits_received{0};
  std::atomic<uint64_t> batches_sent{0};
  std::atomic<uint64_t> messages_batched{0};
  std::atomic<uint64_t> dropped_wrong_token{0};
};

/// Messages per family, for the families of one fixed list (a link's send
/// families or its allowlist); lock-free.
class family_counters {
public:
  explicit family_counters(std::vector<std::string> names);

  /// Counts one message of `family` (a name outside the list is not counted).
  void count(std::string_view family);

  /// Returns the families counted at least once, with their counts.
  std::map<std::string, uint64_t> snapshot() const;

private:
  std::vector<std::string> names_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;
};

} // namespace ferry::detail
