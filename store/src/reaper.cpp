// The reaper thread; see reaper.hpp.
#include "reaper.hpp"

#include <utility>

namespace ferry::store::detail {

reaper::~reaper() {
  stop();
}

void reaper::start(std::chrono::milliseconds interval,
                   std::function<void()> task) {
  if (interval.count() <= 0)
    return;
  thread_ = std::thread{[this, interval, task = std::move(task)] {
    unique_lock lock{mtx_};
    while (!stopping_) {
      // Wait out the interval (spurious wake-ups wait on); stop wakes it.
      auto until = std::chrono::steady_clock::now() + interval;
      while (!stopping_ && cv_.wait_until(lock.native(), until) ==
                             std::cv_status::no_timeout) {
        // nop
      }
      if (stopping_)
        break;
      lock.unlock();
      task();
      lock.lock();
    }
  }};
}

void reaper::stop() {
  {
    lock_guard lock{mtx_};
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

} // namespace ferry::store::detail
