// Counts the allocations of this process: a program linking
// alloc_counter.cpp has every form of the global `operator new` and
// `operator delete` replaced with malloc/free plus a counter.
//
// `allocations()` returns how many `operator new` calls (all threads, every
// form) the process made so far. The counter is one relaxed atomic:
// thread-safe, and it orders nothing.
#pragma once

#include <cstdint>

namespace ferry::bench {

/// Returns the `operator new` calls of this process so far.
uint64_t allocations();

} // namespace ferry::bench
