// link_counters and family_counters: what a link counts for `link_stats`.
//
// Plain atomic counters and histograms (metrics/histogram.hpp), written on the
// data path without locks (atomic increments, relaxed for histograms and
// refusal reasons) and read by `link_state::snapshot`. A snapshot is not atomic
// across counters: each figure is exact, their sum at one instant is not.
//
// Thread-safety: every member may be used from any thread.
#pragma once

#include "metrics/histogram.hpp"

#include <caf/error.hpp>

#include <array>
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
  std::atomic<uint64_t> bytes_relayed_to_peer{0};
  std::atomic<uint64_t> bytes_relayed_by_peer{0};
  std::atomic<uint64_t> refusals{0};
  std::atomic<uint64_t> refused_by_peer{0};
  std::atomic<uint64_t> send_errors{0};
  std::atomic<uint64_t> credit_waits{0};
  std::atomic<uint64_t> peak_in_flight_bytes{0};
  std::atomic<uint64_t> credits_received{0};
  std::atomic<uint64_t> batches_sent{0};
  std::atomic<uint64_t> messages_batched{0};
  std::atomic<uint64_t> unasked_answers{0};
  /// Nanoseconds senders waited for credit.
  std::atomic<uint64_t> credit_wait_nanos{0};
  /// Messages per frame sent.
  histogram batch_messages{histogram::layout::count};

  /// Counts a refused incoming message by the error its sender hears
  /// (`refusals` and `refusals_by_reason`).
  void count_refusal(const caf::error& reason);

  /// Returns the refusals by reason name (reasons never seen left out).
  std::map<std::string, uint64_t> refusal_reasons() const;

private:
  /// One slot per code of ferry's framework errors, and one for any other.
  static constexpr size_t reason_slots = 32;
  std::array<std::atomic<uint64_t>, reason_slots> refusals_by_reason_{};
};

/// Messages per family, and the time spent encoding or decoding elements
/// of each family, for the families of one fixed list (a link's send
/// families or its allowlist); lock-free.
class family_counters {
public:
  explicit family_counters(std::vector<std::string> names);

  /// Counts one message of `family` (a name outside the list is not counted).
  void count(std::string_view family);

  /// Records that one element of `family` took `nanos` to encode or decode.
  void time(std::string_view family, uint64_t nanos);

  /// Returns the families counted at least once, with their counts.
  std::map<std::string, uint64_t> snapshot() const;

  /// Returns the families timed at least once, with their histograms.
  std::map<std::string, histogram_stats> times() const;

private:
  /// Returns the index of `family` in `names_`, or `names_.size()`.
  size_t index_of(std::string_view family) const;

  std::vector<std::string> names_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::unique_ptr<histogram[]> times_;
};

} // namespace ferry::detail
