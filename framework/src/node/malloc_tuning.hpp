// glibc malloc settings for a process that moves large messages (see
// node/malloc_tuning.cpp).
#pragma once

namespace ferry::detail {

/// Raises glibc malloc's mmap and trim thresholds once per process; returns
/// whether they are raised.
bool tune_malloc();

} // namespace ferry::detail
