// The reaper thread: runs a task at a fixed interval until stopped (private).
//
// `store_impl` gives it `reap` so that the counts of processes that died
// without detaching are dropped even when nobody calls into the store. The
// reaper owns its thread, the mutex and the condition variable that wake
// it; the task runs without that mutex held.
//
// Thread-safety: `start` and `stop` are called by the owner (once each, not
// concurrently); the task runs on the reaper's own thread. `stop` returns
// after the task's last run has finished, so the task may use its owner up
// to then.
#pragma once

#include "ferry/store/detail/thread_safety.hpp"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <thread>

namespace ferry::store::detail {

class reaper {
public:
  reaper() = default;

  reaper(const reaper&) = delete;
  reaper& operator=(const reaper&) = delete;

  /// Calls stop().
  ~reaper();

  /// Runs `task` every `interval` on a new thread; does nothing if
  /// `interval` is not positive.
  void start(std::chrono::milliseconds interval, std::function<void()> task);

  /// Wakes the thread, lets it finish, and joins it. Idempotent.
  void stop();

private:
  mutex mtx_;
  std::condition_variable cv_;
  bool stopping_ FERRY_GUARDED_BY(mtx_) = false;
  std::thread thread_;
};

} // namespace ferry::store::detail
