// Making room by spilling objects to disk, and restoring them (private).
//
// When an allocation does not fit, the least recently used sealed object
// that no live handle views (one referenced only by tickets in transit,
// pins or parked references) is written to its spill file and its block
// freed, until the allocation fits or nothing more can go (spilling off,
// the directory's bound `spill_limit` reached, or every resident object in
// use). Getting a spilled object allocates a block for it (perhaps spilling
// others) and reads it back.
//
// The file I/O runs without the lock. Meanwhile the object is `spilling` or
// `restoring`, names the process doing the I/O in `io_process`, and is held
// by a handle of that process, so it can neither be freed nor spilled
// twice. The state changes first and `io_process` is cleared last, so a
// process that dies in between is named by the slot and its I/O is rolled
// back (`roll_back_io_locked`): a spill leaves the object in memory, a
// restore in its file. Other processes that want a `restoring` object wait
// for it (or roll the I/O back if its process died); a handle taken on a
// `spilling` object cancels the spill.
//
// Thread-safety: every function REQUIRES: the caller holds the store lock
// through `g` (for `roll_back_io_locked`, the lock of `t`). The functions
// taking `g` may release and retake it; the caller must look up again any
// entry it read before. Other processes see each state change when they
// next take the lock.
#pragma once

#include "guard.hpp"
#include "object_tables.hpp"

#include "ferry/store/object_id.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <utility>

namespace ferry::store::detail {

/// Allocates a block for `payload` bytes, spilling LRU objects if needed
/// (which releases the lock during file I/O). Never spills object `keep`.
/// Returns {offset, block size}. `self` is this process's table entry.
[[nodiscard]] caf::expected<std::pair<uint64_t, uint64_t>>
allocate_locked(guard& g, object_tables& t, uint32_t self, uint64_t payload,
                uint32_t keep);

/// Adds a handle of process `self` to object `id`, restoring it from its
/// spill file if needed (without the lock during I/O); returns {slot,
/// holder}.
[[nodiscard]] caf::expected<std::pair<uint32_t, uint32_t>>
acquire_locked(guard& g, object_tables& t, uint32_t self, object_id id);

/// Undoes the spill I/O of `slot` whose process will never finish it: a
/// spill leaves the object in memory, a restore in its file.
void roll_back_io_locked(object_tables& t, uint32_t slot) noexcept;

/// Test hook: called when spill or restore I/O starts (lock released).
void set_spill_io_hook(void (*hook)()) noexcept;

} // namespace ferry::store::detail
