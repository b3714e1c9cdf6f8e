// glibc malloc settings for a process that moves large messages.
//
// glibc serves blocks of at least M_MMAP_THRESHOLD (128 KiB at first, raised
// dynamically) with fresh mmap()ed pages, and gives freed heap memory back to
// the kernel above M_TRIM_THRESHOLD. A node that decodes a 1 MiB message into
// a new std::vector then takes ~256 page faults per message (fresh pages cost
// about 7x a warm copy on the machines ferry is measured on): at 1 MiB this
// was most of the time of an ipc message. Raising both thresholds keeps such
// buffers in the heap, faulted in, and reuses them. Blocks above 32 MiB (the
// most glibc allows) still get fresh pages.
//
// Process-wide, applied once, and skipped when the environment already tunes
// malloc (GLIBC_TUNABLES with glibc.malloc.*, MALLOC_*_ env variables) or
// when the node config says `ferry.keep-malloc-defaults`.
#include "node/malloc_tuning.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ferry::detail {

namespace {

constexpr int mmap_threshold = 32 << 20;  // glibc's maximum on 64-bit
constexpr int trim_threshold = 256 << 20; // keep up to this much freed memory

bool environment_tunes_malloc() {
  auto* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr)
    return true;
  for (auto* name : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",
                     "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_"})
    if (std::getenv(name) != nullptr)
      return true;
  return false;
}

} // namespace

bool tune_malloc() {
#if defined(__GLIBC__)
  static std::once_flag once;
  static bool tuned = false;
  std::call_once(once, [] {
    if (environment_tunes_malloc())
      return;
    tuned = mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1 &&
            mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1;
  });
  return tuned;
#else
  return false;
#endif
}

} // namespace ferry::detail
