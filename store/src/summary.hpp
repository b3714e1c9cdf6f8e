// Taking a store's memory summary from its segment (private).
//
// `summarize` copies what `ferry-store list` and
// `object_store::memory_summary` show (totals, every object with its
// holders by pid, every attached process and whether it still runs) out of
// the segment into a `memory_summary` value; memory_summary.cpp renders
// that value. The tables are read under the lock, in one critical section,
// so the figures are consistent with each other; whether processes are
// alive is read from /proc afterwards, without the lock.
//
// `totals` reads the same figures without the objects: counts only, no
// allocation under the lock.
//
// Thread-safety: takes the store lock itself; callable from any thread.
#pragma once

#include "object_tables.hpp"

#include "ferry/store/memory_summary.hpp"
#include "ferry/store/store_totals.hpp"

#include <caf/expected.hpp>

#include <cstdint>

namespace ferry::store::detail {

/// Returns the memory summary of the store whose tables are `t`; `self` is
/// this process's entry in the process table.
[[nodiscard]] caf::expected<memory_summary> summarize(object_tables& t,
                                                      uint32_t self);

/// Returns the totals of the store whose tables are `t` (what `summarize`
/// returns, without the objects and processes themselves).
[[nodiscard]] caf::expected<store_totals> totals(object_tables& t,
                                                 uint32_t self);

} // namespace ferry::store::detail
