// plan_cache: a link's encode and decode plans, found without a lock.
//
// Every message a link sends or receives looks up the plan for its type (or
// its payload header's key). Readers run on any thread at once: senders,
// the thread reading CAF's messages, the puller. Entries are only ever
// appended, never changed or removed while the cache lives, so a reader
// scans the published prefix with one acquire load and no lock, and a found
// entry stays valid as long as the cache. The cache holds at most `N`
// entries; once full, callers take the path without a plan (a peer naming
// ever new headers cannot grow it).
#pragma once

#include "thread_safety.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>

namespace ferry::detail {

template <class Entry, size_t N>
class plan_cache {
public:
  /// Returns the first entry that satisfies `pred`, or null.
  template <class Pred>
  const Entry* find(Pred&& pred) const {
    auto n = size_.load(std::memory_order_acquire);
    for (size_t i = 0; i < n; ++i)
      if (pred(*slots_[i]))
        return slots_[i].get();
    return nullptr;
  }

  /// Returns whether the cache holds `N` entries (`add` adds no more).
  bool full() const { return size_.load(std::memory_order_acquire) == N; }

  /// Appends `x` unless an entry satisfying `same` is there already (made by
  /// a concurrent caller) or the cache is full; returns the entry that
  /// satisfies `same`, or null when full.
  template <class Pred>
  const Entry* add(Entry x, Pred&& same) {
    lock_guard guard{mtx_};
    auto n = size_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < n; ++i)
      if (same(*slots_[i]))
        return slots_[i].get();
    if (n == N)
      return nullptr;
    slots_[n] = std::make_unique<const Entry>(std::move(x));
    size_.store(n + 1, std::memory_order_release);
    return slots_[n].get();
  }

private:
  /// Written under `mtx_`; `find` reads the published prefix without it,
  /// so not FERRY_GUARDED_BY.
  std::array<std::unique_ptr<const Entry>, N> slots_;
  std::atomic<size_t> size_{0};
  /// Orders the writers (`add`).
  mutex mtx_;
};

} // namespace ferry::detail
