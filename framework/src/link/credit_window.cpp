// credit_window: the sender's side of ferry's flow control (see
// link/credit_window.hpp).
#include "link/credit_window.hpp"

#include "ferry/errc.hpp"

#include <algorithm>

namespace ferry::detail {

credit_window::credit_window(uint64_t window_bytes, uint64_t window_messages,
                             std::chrono::milliseconds send_timeout,
                             std::function<void()> probe,
                             link_counters& counters, std::string peer_name,
                             const clock& time)
  : window_bytes_(window_bytes),
    window_messages_(window_messages),
    send_timeout_(send_timeout),
    probe_(std::move(probe)),
    counters_(counters),
    peer_name_(std::move(peer_name)),
    time_(time) {
  // nop
}

bool credit_window::fits(uint64_t bytes) const {
  return closed_ || ((in_flight_bytes_ == 0 ||
                      in_flight_bytes_ + bytes <= window_bytes_) &&
                     in_flight_messages_ < window_messages_);
}

caf::error credit_window::acquire(uint64_t bytes, bool may_wait) {
  unique_lock guard{mtx_};
  // Waiting senders take credit in the order they came: a message larger
  // than what is left of the window (one above window-bytes needs an empty
  // link) would otherwise wait out send-timeout while smaller ones from other
  // senders keep taking what is freed. Responses never wait and bypass the
  // queue.
  if (may_wait && (!waiters_.empty() || !fits(bytes))) {
    ++counters_.credit_waits;
    auto waited_since = clock::steady().now();
    auto me = next_waiter_++;
    waiters_.push_back(me);
    auto deadline = time_.now() + send_timeout_;
    auto timed_out = false;
    // Waits for its turn and room, or the window's closing (the condition
    // reads the guarded state here, where the lock is seen to be held).
    while (!closed_ && (waiters_.front() != me || !fits(bytes))) {
      if (timed_out) {
        leave_queue(me, waited_since);
        return timeout_error(bytes);
      }
      if (!probing_) {
        // The peer batches credit: ask for what it holds back.
        probing_ = true;
        guard.unlock();
        probe_();
        guard.lock();
        continue;
      }
      auto left = deadline - time_.now();
      if (left <= clock::duration::zero()) {
        timed_out = true;
        continue;
      }
      cv_.wait_for(guard.native(), time_.real_wait(left));
    }
    leave_queue(me, waited_since);
  }
  if (closed_)
    return caf::make_error(errc::link_down,
                           "the link to node " + peer_name_ + " is down");
  in_flight_bytes_ += bytes;
  in_flight_messages_ += 1;
  if (in_flight_bytes_ > counters_.peak_in_flight_bytes)
    counters_.peak_in_flight_bytes = in_flight_bytes_;
  return caf::none;
}

void credit_window::leave_queue(uint64_t me,
                                std::chrono::steady_clock::time_point since) {
  counters_.credit_wait_nanos.fetch_add(nanos_since(since),
                                        std::memory_order_relaxed);
  waiters_.erase(std::find(waiters_.begin(), waiters_.end(), me));
  cv_.notify_all(); // the next in line may fit as well
}

caf::error credit_window::timeout_error(uint64_t bytes) const {
  return caf::make_error(
    errc::send_timeout,
    "no credit from node " + peer_name_ + " within " +
      std::to_string(send_timeout_.count()) +
      " ms: its actors process messages slower than they arrive (" +
      std::to_string(in_flight_messages_) + " messages, " +
      std::to_string(in_flight_bytes_) + " bytes in flight, this message " +
      std::to_string(bytes) +
      "); raise send-timeout or window-bytes, or slow the sender down");
}

void credit_window::release(uint64_t bytes, uint64_t messages) {
  {
    lock_guard guard{mtx_};
    in_flight_bytes_ -= std::min(in_flight_bytes_, bytes);
    in_flight_messages_ -= std::min(in_flight_messages_, messages);
    probing_ = false;
  }
  cv_.notify_all();
}

void credit_window::close() {
  {
    lock_guard guard{mtx_};
    closed_ = true;
  }
  cv_.notify_all();
}

} // namespace ferry::detail
