// The store lock: the segment's robust mutex, held by scope (private).
//
// One process-shared robust pthread mutex in the segment header guards all
// of the segment's tables. `guard` takes it for its scope and may release
// and take it again in between (spill I/O runs without the lock). If the
// previous owner died holding it (`EOWNERDEAD`), the guard repairs the
// segment (`recover_locked`: rebuilds derived state, reaps dead processes)
// and marks the mutex consistent before the caller goes on, so a crash
// inside a critical section never wedges the other processes; it logs a
// warning once the lock is released.
//
// Thread-safety: a guard belongs to one thread; any number of guards of
// any threads and processes may contend for the same mutex. Everything a
// holder wrote is visible to the next holder, in any process.
#pragma once

#include "object_tables.hpp"

#include <caf/error.hpp>

#include <cstdint>

namespace ferry::store::detail {

class guard {
public:
  /// Takes the lock of `tables`; `self` is this process's entry in the
  /// process table (npos32 before it registered), which recovery keeps.
  guard(object_tables& tables, uint32_t self);

  ~guard();

  guard(const guard&) = delete;
  guard& operator=(const guard&) = delete;

  /// Takes the lock (again). Returns `ok()`.
  bool lock();

  /// Releases the lock early (e.g. around spill I/O).
  void unlock();

  /// Returns true if the guard holds the lock.
  bool ok() const noexcept { return rc_ == 0; }

  /// Returns why the lock could not be taken.
  [[nodiscard]] caf::error error() const;

private:
  object_tables& tables_;
  uint32_t self_;
  int rc_ = 0;
  bool recovered_ = false;
};

} // namespace ferry::store::detail
