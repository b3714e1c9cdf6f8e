// The vector pool (see ferry/serializers/vector_pool.hpp).
//
// One mutex guards the kept vectors, in the order they were kept (oldest
// first). The limits also live in atomics, so that the check every decoded
// message makes (is this vector large enough to keep?) takes no lock. Vectors
// leave the pool under the lock but are freed after it is released: freeing a
// gigabyte unmaps it, which takes milliseconds.
#include "ferry/serializers/detail/vector_pool.hpp"

#include "ferry/serializers/detail/thread_safety.hpp"

#include <algorithm>
#include <atomic>

namespace ferry::serializers {

namespace {

using clock_type = std::chrono::steady_clock;

struct kept_vector {
  const std::type_info* element = nullptr;
  void* vec = nullptr;
  size_t bytes = 0;
  clock_type::time_point since;
  void (*destroy)(void*) = nullptr;
};

struct pool_state {
  std::atomic<uint64_t> min_bytes{vector_pool_limits{}.min_bytes};
  std::atomic<uint64_t> max_bytes{vector_pool_limits{}.max_bytes};
  detail::mutex mtx;
  vector_pool_limits limits FERRY_GUARDED_BY(mtx);
  std::vector<kept_vector> kept FERRY_GUARDED_BY(mtx);
  uint64_t kept_bytes FERRY_GUARDED_BY(mtx) = 0;
  uint64_t reused FERRY_GUARDED_BY(mtx) = 0;
  uint64_t missed FERRY_GUARDED_BY(mtx) = 0;
  uint64_t freed FERRY_GUARDED_BY(mtx) = 0;
};

pool_state& the_pool() {
  // Leaked on purpose: messages may die during static destruction.
  static auto* instance = new pool_state;
  return *instance;
}

/// Moves the vectors idle too long (all with `all`), then the oldest while
/// more than `max_bytes` are kept, into `out`; idle as of `now`.
void evict(pool_state& st, bool all, std::vector<kept_vector>& out,
           clock_type::time_point now = clock_type::now())
  FERRY_REQUIRES(st.mtx) {
  auto deadline = now - st.limits.max_idle;
  auto first_kept = std::stable_partition(
    st.kept.begin(), st.kept.end(),
    [&](const kept_vector& x) { return all || x.since < deadline; });
  // stable_partition put the evicted ones first; then drop the oldest while
  // over budget (the survivors are still oldest first).
  auto bytes_after = st.kept_bytes;
  for (auto i = st.kept.begin(); i != first_kept; ++i)
    bytes_after -= i->bytes;
  while (first_kept != st.kept.end() && bytes_after > st.limits.max_bytes) {
    bytes_after -= first_kept->bytes;
    ++first_kept;
  }
  st.freed += static_cast<uint64_t>(first_kept - st.kept.begin());
  out.insert(out.end(), st.kept.begin(), first_kept);
  st.kept.erase(st.kept.begin(), first_kept);
  st.kept_bytes = bytes_after;
}

void destroy_all(std::vector<kept_vector>& xs) noexcept {
  for (auto& x : xs)
    x.destroy(x.vec);
  xs.clear();
}

/// Frees what `evict` selects as of `now` (every kept vector with `all`),
/// after letting go of the lock.
void trim_as_of(bool all, clock_type::time_point now) {
  auto& st = the_pool();
  std::vector<kept_vector> evicted;
  {
    detail::lock_guard guard{st.mtx};
    evict(st, all, evicted, now);
  }
  destroy_all(evicted);
}

} // namespace

vector_pool_limits vector_pool_config() {
  auto& st = the_pool();
  detail::lock_guard guard{st.mtx};
  return st.limits;
}

void vector_pool_config(const vector_pool_limits& limits) {
  auto& st = the_pool();
  std::vector<kept_vector> evicted;
  {
    detail::lock_guard guard{st.mtx};
    st.limits = limits;
    st.min_bytes = limits.min_bytes;
    st.max_bytes = limits.max_bytes;
    evict(st, false, evicted);
  }
  destroy_all(evicted);
}

vector_pool_counters vector_pool_stats() {
  auto& st = the_pool();
  detail::lock_guard guard{st.mtx};
  vector_pool_counters result;
  result.kept = st.kept.size();
  result.kept_bytes = st.kept_bytes;
  result.reused = st.reused;
  result.missed = st.missed;
  result.freed = st.freed;
  return result;
}

void trim_vector_pool(bool all) {
  trim_as_of(all, clock_type::now());
}

namespace detail {

void trim_vector_pool_at(std::chrono::steady_clock::time_point now) {
  trim_as_of(false, now);
}

bool pool_keeps(size_t bytes) noexcept {
  auto& st = the_pool();
  return bytes > 0 && bytes >= st.min_bytes.load(std::memory_order_relaxed) &&
         bytes <= st.max_bytes.load(std::memory_order_relaxed);
}

void* take_pooled(const std::type_info& element, size_t bytes) noexcept {
  auto& st = the_pool();
  if (bytes == 0 || bytes < st.min_bytes.load(std::memory_order_relaxed))
    return nullptr;
  void* result = nullptr;
  std::vector<kept_vector> evicted;
  {
    detail::lock_guard guard{st.mtx};
    // Best fit among vectors of this element type no more than twice as
    // large: a small message must not hold on to a huge block that the next
    // huge message would then have to allocate anew. Among equal fits the
    // one kept last: a steady stream then cycles through a few vectors, and
    // what a burst left beyond them idles out after `max_idle`.
    auto best = st.kept.end();
    for (auto i = st.kept.begin(); i != st.kept.end(); ++i)
      if (*i->element == element && i->bytes >= bytes &&
          i->bytes / 2 <= bytes &&
          (best == st.kept.end() || i->bytes <= best->bytes))
        best = i;
    if (best != st.kept.end()) {
      result = best->vec;
      st.kept_bytes -= best->bytes;
      st.kept.erase(best);
      ++st.reused;
    } else {
      ++st.missed;
    }
    try {
      evicted.reserve(st.kept.size());
      evict(st, false, evicted);
    } catch (...) {
      // Out of memory for the list: evict next time.
    }
  }
  destroy_all(evicted);
  return result;
}

bool give_pooled(const std::type_info& element, void* vec, size_t bytes,
                 void (*destroy)(void*)) noexcept {
  auto& st = the_pool();
  std::vector<kept_vector> evicted;
  bool kept = false;
  {
    detail::lock_guard guard{st.mtx};
    if (bytes < st.limits.min_bytes || bytes > st.limits.max_bytes)
      return false;
    try {
      evicted.reserve(st.kept.size() + 1);
      st.kept.push_back(
        kept_vector{&element, vec, bytes, clock_type::now(), destroy});
      st.kept_bytes += bytes;
      kept = true;
      evict(st, false, evicted);
    } catch (...) {
      // Out of memory for the list: the caller frees the vector.
    }
  }
  destroy_all(evicted);
  return kept;
}

} // namespace detail

} // namespace ferry::serializers
