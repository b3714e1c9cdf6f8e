// activity_counter: counts work in progress, so that a shutdown can wait
// until none is left.
//
// Callers `enter` before they use what the shutdown takes away and `leave`
// after; the shutdown first makes sure no new work can start (e.g. it clears
// a pointer that `enter`ing callers check after entering), then
// `wait_idle` blocks until every entered call has left. Waiting blocks on
// the counter itself (C++20 atomic wait), not in a sleep loop; `leave`
// wakes a waiter only once a shutdown waits, so the common path costs two
// atomic operations and a load.
//
// Thread-safety: every member function may be called from any thread; all
// operations are sequentially consistent, which the pattern above relies
// on.
#pragma once

#include <atomic>
#include <cstdint>

namespace ferry::detail {

class activity_counter {
public:
  /// Counts one call in progress.
  void enter() { count_.fetch_add(1); }

  /// Ends a call counted by `enter`.
  void leave() {
    if (count_.fetch_sub(1) == 1 && waiting_.load())
      count_.notify_all();
  }

  /// Returns the calls in progress now.
  uint32_t count() const { return count_.load(); }

  /// Blocks until no call is in progress.
  void wait_idle() {
    waiting_.store(true);
    for (auto n = count_.load(); n != 0; n = count_.load())
      count_.wait(n);
  }

  /// Counts the lifetime of an object (a member declared first in its
  /// class, so that it leaves only after every other member is gone).
  class scope {
  public:
    explicit scope(activity_counter& counter) : counter_(counter) {
      counter_.enter();
    }
    ~scope() { counter_.leave(); }
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;

  private:
    activity_counter& counter_;
  };

private:
  std::atomic<uint32_t> count_{0};
  std::atomic<bool> waiting_{false};
};

} // namespace ferry::detail
