// Checked locking: a mutex, its lock holders and annotations that clang's
// -Wthread-safety analysis checks at compile time.
//
// A member written `T x_ FERRY_GUARDED_BY(mtx_);` may only be read or written
// while `mtx_` is held; a function declared `FERRY_REQUIRES(mtx_)` may only
// be called with it held, and `FERRY_EXCLUDES(mtx_)` only without it. The
// analysis sees `mutex`, `lock_guard` and `unique_lock` below (std::mutex of
// libstdc++ carries no annotations). Under g++ the macros are empty and the
// types are thin wrappers of std::mutex and std::unique_lock, so the g++
// build that runs the tests executes the same code. CI compiles the
// libraries with clang and `-Wthread-safety -Werror`.
//
// A condition variable waits on `unique_lock::native()`; a predicate that
// reads guarded members is written as a loop around `wait` in the function
// that holds the lock, so that the analysis sees the reads under the lock.
#pragma once

#include <mutex>

#if defined(__clang__)
#define FERRY_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define FERRY_THREAD_ANNOTATION(x)
#endif

#define FERRY_CAPABILITY(x) FERRY_THREAD_ANNOTATION(capability(x))
#define FERRY_SCOPED_CAPABILITY FERRY_THREAD_ANNOTATION(scoped_lockable)
#define FERRY_GUARDED_BY(x) FERRY_THREAD_ANNOTATION(guarded_by(x))
#define FERRY_PT_GUARDED_BY(x) FERRY_THREAD_ANNOTATION(pt_guarded_by(x))
#define FERRY_ACQUIRED_BEFORE(...)                                             \
  FERRY_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define FERRY_ACQUIRED_AFTER(...)                                              \
  FERRY_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define FERRY_REQUIRES(...)                                                    \
  FERRY_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define FERRY_EXCLUDES(...) FERRY_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define FERRY_ACQUIRE(...)                                                     \
  FERRY_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define FERRY_RELEASE(...)                                                     \
  FERRY_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define FERRY_TRY_ACQUIRE(...)                                                 \
  FERRY_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define FERRY_RETURN_CAPABILITY(x) FERRY_THREAD_ANNOTATION(lock_returned(x))
#define FERRY_NO_THREAD_SAFETY_ANALYSIS                                        \
  FERRY_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace ferry::serializers::detail {

/// A std::mutex the analysis knows.
class FERRY_CAPABILITY("mutex") mutex {
public:
  mutex() = default;
  mutex(const mutex&) = delete;
  mutex& operator=(const mutex&) = delete;

  void lock() FERRY_ACQUIRE() { impl_.lock(); }

  void unlock() FERRY_RELEASE() { impl_.unlock(); }

  bool try_lock() FERRY_TRY_ACQUIRE(true) { return impl_.try_lock(); }

  /// The wrapped mutex, for std::unique_lock (see unique_lock::native).
  std::mutex& native() { return impl_; }

private:
  std::mutex impl_;
};

/// Holds a mutex for its scope.
class FERRY_SCOPED_CAPABILITY lock_guard {
public:
  explicit lock_guard(mutex& mtx) FERRY_ACQUIRE(mtx) : mtx_(mtx) {
    mtx_.lock();
  }

  ~lock_guard() FERRY_RELEASE() { mtx_.unlock(); }

  lock_guard(const lock_guard&) = delete;
  lock_guard& operator=(const lock_guard&) = delete;

private:
  mutex& mtx_;
};

/// Holds a mutex for its scope, may let go of it and take it again, and
/// lends a std::unique_lock to a condition variable's wait.
class FERRY_SCOPED_CAPABILITY unique_lock {
public:
  explicit unique_lock(mutex& mtx) FERRY_ACQUIRE(mtx) : impl_(mtx.native()) {
    // nop
  }

  ~unique_lock() FERRY_RELEASE() {
    // std::unique_lock releases the mutex if it still holds it.
  }

  unique_lock(const unique_lock&) = delete;
  unique_lock& operator=(const unique_lock&) = delete;

  void lock() FERRY_ACQUIRE() { impl_.lock(); }

  void unlock() FERRY_RELEASE() { impl_.unlock(); }

  /// For std::condition_variable::wait: the wait gives the mutex back
  /// before it returns, so the caller still holds it afterwards.
  std::unique_lock<std::mutex>& native() { return impl_; }

private:
  std::unique_lock<std::mutex> impl_;
};

} // namespace ferry::serializers::detail
