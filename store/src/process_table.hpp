// The segment's table of attached processes and reaping the dead (private).
//
// Each process attached to a store has one entry (pid and start time, see
// process_identity.hpp); every count it holds (handles, unsealed builders,
// tickets it exported, pins, parked references) sits in a holder entry that
// names that entry. A process that exits without detaching (crash, kill -9)
// leaves its counts behind: reaping drops them, frees what that leaves
// unreferenced, settles spill I/O it left half done, and frees its entry.
// Reaping happens on attach, from the reaper thread (reaper.hpp), on
// `object_store::reap`, when recovery finds dead processes, and when a
// process meets another's unfinished restore.
//
// Thread-safety: functions ending in `_locked` REQUIRE: the caller holds the
// store lock. The others take it themselves (and release it while they read
// /proc). Other processes see a registration or a reap when they next take
// the lock.
#pragma once

#include "object_tables.hpp"
#include "process_identity.hpp"

#include <caf/expected.hpp>

#include <cstddef>
#include <cstdint>

namespace ferry::store::detail {

/// Takes a free entry of the process table for `self` and returns its
/// index, reaping the stale entry of a dead process with the same pid
/// first, and reaping dead processes if the table is full. Returns npos32
/// and registers nothing if the segment is retired (its last process left
/// it): the caller starts over with a new segment.
[[nodiscard]] caf::expected<uint32_t>
register_process(object_tables& t, const process_identity& self);

/// Drops every count of `process` (an index into the process table) and
/// frees its entry.
void reap_process_locked(object_tables& t, uint32_t process) noexcept;

/// Reaps every registered process other than `self` that no longer runs;
/// returns how many.
[[nodiscard]] caf::expected<size_t> reap_dead_processes(object_tables& t,
                                                        uint32_t self);

} // namespace ferry::store::detail
