// pull_queue: messages waiting for pulled frames (see transfer/pull_queue.hpp).
#include "transfer/pull_queue.hpp"

namespace ferry::detail {

pull_queue::pull_queue(std::function<caf::actor()> spawn_puller)
  : spawn_puller_(std::move(spawn_puller)) {
  // nop
}

pull_queue::outcome pull_queue::push(wire_message& msg, uint64_t size,
                                     caf::actor& wake) {
  auto remote = has_pulled_frames(msg);
  lock_guard guard{mtx_};
  if (!draining_ && !remote)
    return outcome::deliver_now;
  queue_.emplace_back(std::move(msg), size);
  if (draining_)
    return outcome::queued;
  draining_ = true;
  if (!puller_)
    puller_ = spawn_puller_();
  wake = puller_; // a copy: close swaps puller_ under the lock
  return outcome::queued_wake;
}

std::optional<std::pair<wire_message, uint64_t>> pull_queue::take() {
  lock_guard guard{mtx_};
  if (queue_.empty()) {
    draining_ = false;
    return std::nullopt;
  }
  auto result = std::move(queue_.front());
  queue_.pop_front();
  return result;
}

caf::actor pull_queue::close() {
  decltype(queue_) dropped; // released after the lock
  caf::actor puller;
  lock_guard guard{mtx_};
  dropped.swap(queue_);
  puller.swap(puller_);
  return puller;
}

} // namespace ferry::detail
