// credit_return: the receiver's side of ferry's flow control.
//
// When a target actor has processed a message from the peer (its
// `credit_token` is released), the message's credit goes back to the
// sending node. One control message per message would double the traffic,
// so credit goes back in batches of a quarter of the smaller window, or at
// once when the peer waits for it (a `credit_probe`). Each `credit` also
// says how many messages this node has taken off the link so far
// (delivered or refused): their store tickets are redeemed or cancelled by
// then, so the sender forgets them.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the credit not yet returned.
#pragma once

#include "thread_safety.hpp"
#include "wire/control.hpp"

#include <atomic>
#include <cstdint>
#include <optional>

namespace ferry::detail {

class credit_return {
public:
  /// Returns credit once `byte_batch` bytes or `message_batch` messages are
  /// processed.
  credit_return(uint64_t byte_batch, uint64_t message_batch);

  /// A message of `bytes` was processed: returns the credit to send now,
  /// or nothing while the batch is not full and the peer is not waiting.
  std::optional<credit> processed(uint64_t bytes);

  /// The peer waits for credit: returns what is processed now, or nothing
  /// (then the next processed message goes back at once).
  std::optional<credit> probed();

  /// Counts a message taken off the link, once its store tickets are
  /// redeemed or cancelled.
  void taken() { taken_.fetch_add(1); }

private:
  /// Takes the credit held back.
  credit take_locked() FERRY_REQUIRES(mtx_);

  const uint64_t byte_batch_;
  const uint64_t message_batch_;
  std::atomic<uint64_t> taken_{0};

  mutex mtx_;
  uint64_t unreturned_bytes_ FERRY_GUARDED_BY(mtx_) = 0;
  uint64_t unreturned_messages_ FERRY_GUARDED_BY(mtx_) = 0;
  /// The peer waits for credit: return the next processed message at once.
  bool flush_requested_ FERRY_GUARDED_BY(mtx_) = false;
};

} // namespace ferry::detail
