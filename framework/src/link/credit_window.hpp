// credit_window: how much a node may send a peer before the peer's actors
// have processed it (the sender's side of ferry's flow control).
//
// Without backpressure a fast sender would queue unbounded bytes. Every
// wire message a node sends takes credit for its `wire_size` bytes and
// one message; the peer returns exactly that credit once its target actor
// has processed (or the peer refused) the message. A sender whose message
// does not fit waits, first come first served, until credit returns or
// `send_timeout` passes. Responses never wait (they are bounded by the
// requests outstanding), so two saturated nodes cannot deadlock on each
// other's windows. The receiver returns credit in batches; a waiting sender
// asks for what it holds back with a probe.
//
// Invariants: bytes and messages in flight never exceed the window, except
// that a message larger than `window_bytes` goes when nothing else is in
// flight, and responses (`may_wait` false) are counted without waiting.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the window and its queue of waiters.
#pragma once

#include "clock.hpp"
#include "link/link_counters.hpp"
#include "thread_safety.hpp"

#include <caf/error.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>

namespace ferry::detail {

class credit_window {
public:
  /// `probe` asks the peer for the credit it holds back; called without the
  /// lock, at most once until credit comes back. `time` measures the send
  /// timeout.
  credit_window(uint64_t window_bytes, uint64_t window_messages,
                std::chrono::milliseconds send_timeout,
                std::function<void()> probe, link_counters& counters,
                std::string peer_name, const clock& time);

  /// Takes credit for one message of `bytes`. When it does not fit and
  /// `may_wait`, waits (after earlier waiters) until it does; fails with
  /// `send_timeout` when no credit came within the send timeout, and with
  /// `link_down` once the window is closed.
  [[nodiscard]] caf::error acquire(uint64_t bytes, bool may_wait);

  /// Gives back credit the peer returned, and wakes waiting senders.
  void release(uint64_t bytes, uint64_t messages);

  /// Closes the window: waiting senders fail at once, and so does every
  /// later `acquire`.
  void close();

private:
  /// Whether a message of `bytes` fits now.
  bool fits(uint64_t bytes) const FERRY_REQUIRES(mtx_);

  /// Takes waiter `me`, waiting since `since`, out of the queue and wakes
  /// the next in line.
  void leave_queue(uint64_t me, std::chrono::steady_clock::time_point since)
    FERRY_REQUIRES(mtx_);

  caf::error timeout_error(uint64_t bytes) const FERRY_REQUIRES(mtx_);

  const uint64_t window_bytes_;
  const uint64_t window_messages_;
  const std::chrono::milliseconds send_timeout_;
  const std::function<void()> probe_;
  link_counters& counters_;
  const std::string peer_name_;
  const clock& time_;

  mutex mtx_;
  std::condition_variable cv_;
  bool closed_ FERRY_GUARDED_BY(mtx_) = false;
  uint64_t in_flight_bytes_ FERRY_GUARDED_BY(mtx_) = 0;
  uint64_t in_flight_messages_ FERRY_GUARDED_BY(mtx_) = 0;
  /// A probe went out and no credit came back since.
  bool probing_ FERRY_GUARDED_BY(mtx_) = false;
  /// Senders waiting for credit, in the order they came.
  std::deque<uint64_t> waiters_ FERRY_GUARDED_BY(mtx_);
  uint64_t next_waiter_ FERRY_GUARDED_BY(mtx_) = 0;
};

} // namespace ferry::detail
