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
    std::unique_lock lock{mtx_};
    while (!stopping_) {
      if (cv_.wait_for(lock, interval, [this] { return stopping_; }))
        break;
      lock.unlock();
      task();
      lock.lock();
    }
  }};
}

void reaper::stop() {
  {
    std::lock_guard lock{mtx_};
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

} // namespace ferry::store::detail
