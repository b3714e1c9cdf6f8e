// Copies into freshly allocated memory at more than page-fault speed.
//
// A decoded std::vector of a megabyte or more lives in memory the process
// has never touched (glibc maps such blocks anew for every allocation above
// its mmap threshold), and the first write to each 4 KiB page faults: about
// 1 GB/s here against 7-8 GB/s for a warm copy. Advising the kernel that the
// block is a transparent-huge-page candidate before the copy touches it
// makes the faults 2 MiB each (on kernels whose THP mode is `madvise` or
// `always`; elsewhere the advice is ignored). Measured here for 64 MiB:
// 28-72 ms plain, 10-18 ms advised. Better still is memory that is already
// faulted in: large vectors reuse those of the vector pool when it has one.
#pragma once

#include "ferry/serializers/detail/vector_pool.hpp"

#include <cstddef>

namespace ferry::serializers::detail {

/// Blocks at least this large are advised as huge-page candidates.
inline constexpr size_t huge_page_advice_threshold = size_t{2} << 20;

/// Advises the page-aligned interior of [p, p + n) as a huge-page candidate.
/// Never fails (the advice is a hint).
void advise_huge_pages(void* p, size_t n) noexcept;

/// Replaces the content of `out` (a std::vector or std::basic_string) with
/// the `n` elements at `first`. A vector the pool would keep (at least its
/// `min_bytes`; ferry/serializers/vector_pool.hpp) reuses one of the pool's
/// when it has one; other buffers of `huge_page_advice_threshold` or more
/// are advised as huge-page candidates before the copy touches them.
template <class Container, class T>
void assign_fresh(Container& out, const T* first, size_t n) {
  if (out.capacity() >= n) {
    // Its own memory is faulted in already.
    out.assign(first, first + n);
    return;
  }
  auto bytes = n * sizeof(T);
  if constexpr (is_poolable_vector<Container>) {
    // So is a vector of the vector pool.
    if (pool_keeps(bytes)) {
      auto reused = take_vector<typename Container::value_type>(n);
      if (reused.capacity() >= n) {
        reused.assign(first, first + n);
        out.swap(reused);
        return;
      }
    }
  }
  if (bytes >= huge_page_advice_threshold) {
    Container fresh;
    fresh.reserve(n);
    advise_huge_pages(fresh.data(), bytes);
    fresh.assign(first, first + n);
    out.swap(fresh);
    return;
  }
  out.assign(first, first + n);
}

} // namespace ferry::serializers::detail
