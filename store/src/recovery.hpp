// Repairing a segment whose lock owner died (private).
//
// A process that dies inside a critical section leaves the segment's
// primary entries whole or absent (markers are written last and cleared
// first, see layout.hpp) but its derived state (per-object totals, holder
// lists, free lists, allocator bins and block headers, byte totals) in any
// state. The next process to take the lock gets `EOWNERDEAD` and, before it
// marks the mutex consistent, calls `recover_locked`, which rebuilds all
// derived state from the primary entries, drops entries that point to
// nothing, frees objects nobody references, removes stray spill files of
// the store, rolls back spill I/O that no attached process will finish,
// and reaps every dead process. It counts itself in `recoveries`.
//
// Thread-safety: REQUIRES: the caller holds the lock (as `guard` does when
// it calls this). The other processes see the repaired segment when they
// next take the lock.
#pragma once

#include "object_tables.hpp"

#include <cstdint>

namespace ferry::store::detail {

/// Rebuilds the segment's derived state after its lock owner died; `self`
/// is this process's entry in the process table (npos32 if none), which is
/// never reaped here.
void recover_locked(object_tables& t, uint32_t self) noexcept;

} // namespace ferry::store::detail
