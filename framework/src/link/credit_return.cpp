// credit_return: returning credit in batches (see link/credit_return.hpp).
#include "link/credit_return.hpp"

#include <utility>

namespace ferry::detail {

credit_return::credit_return(uint64_t byte_batch, uint64_t message_batch)
  : byte_batch_(byte_batch),
    message_batch_(message_batch) {
  // nop
}

std::optional<credit> credit_return::processed(uint64_t bytes) {
  lock_guard guard{mtx_};
  unreturned_bytes_ += bytes;
  unreturned_messages_ += 1;
  // Batch the credit (one control message per quarter window); a sender
  // that waits for the remainder asks for it with a probe.
  if (!flush_requested_ && unreturned_bytes_ < byte_batch_ &&
      unreturned_messages_ < message_batch_)
    return std::nullopt;
  return take_locked();
}

std::optional<credit> credit_return::probed() {
  lock_guard guard{mtx_};
  if (unreturned_messages_ == 0) {
    // Nothing processed yet: return the next message as soon as it is.
    flush_requested_ = true;
    return std::nullopt;
  }
  return take_locked();
}

credit credit_return::take_locked() {
  flush_requested_ = false;
  credit result;
  result.bytes = std::exchange(unreturned_bytes_, 0);
  result.messages = std::exchange(unreturned_messages_, 0);
  result.delivered = taken_.load();
  return result;
}

} // namespace ferry::detail
