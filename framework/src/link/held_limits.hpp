// held_limits: how much of a peer's traffic a node holds unprocessed.
//
// A well-behaved peer keeps to its credit window; a hostile or misconfigured
// one may not. A node therefore counts the peer's messages it has taken and
// its actors have not processed yet (in mailboxes, or queued behind a frame
// being pulled) and refuses a message that would take it beyond
// `max_held_bytes` or `max_held_messages` (the caller answers
// `receiver_full`). A message is always taken when nothing is held,
// however large.
//
// The limits bound memory; they are not a window. Counting is relaxed and
// not transactional: two threads taking messages of the link at once may
// both fit the last place.
//
// Thread-safety: lock-free; every member may be used from any thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace ferry::detail {

class held_limits {
public:
  held_limits(uint64_t max_bytes, uint64_t max_messages)
    : max_bytes_(max_bytes),
      max_messages_(max_messages) {
    // nop
  }

  /// Returns whether a message of `bytes` fits beside what is held now.
  bool fits(uint64_t bytes) const {
    auto held = bytes_.load(std::memory_order_relaxed);
    auto count = messages_.load(std::memory_order_relaxed);
    // (A peer's wild sizes saturate in wire_size: no sum that wraps.)
    return count == 0 || (held <= max_bytes_ && bytes <= max_bytes_ - held &&
                          count < max_messages_);
  }

  /// Counts a message of `bytes` as held.
  void hold(uint64_t bytes) {
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
    messages_.fetch_add(1, std::memory_order_relaxed);
  }

  /// A held message of `bytes` was processed (or refused).
  void release(uint64_t bytes) {
    bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    messages_.fetch_sub(1, std::memory_order_relaxed);
  }

  /// Returns the bytes held now.
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }

  /// Returns the messages held now.
  uint64_t messages() const {
    return messages_.load(std::memory_order_relaxed);
  }

  uint64_t max_bytes() const { return max_bytes_; }
  uint64_t max_messages() const { return max_messages_; }

private:
  const uint64_t max_bytes_;
  const uint64_t max_messages_;
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> messages_{0};
};

} // namespace ferry::detail
