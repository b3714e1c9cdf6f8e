// A store's figures without its list of objects: what a monitor samples
// every second (a node's metrics endpoint and dashboard).
//
// `object_store::totals()` takes it under the store's lock, like
// `memory_summary()`, but copies no object and allocates nothing while it
// holds the lock, so sampling it often costs the store's other processes
// little however many objects the store holds. Plain values.
#pragma once

#include <cstdint>
#include <string>

namespace ferry::store {

/// The figures of a whole store.
struct store_totals {
  /// The store's name.
  std::string name;
  /// Bytes available for objects.
  uint64_t capacity = 0;
  /// Bytes of memory taken by resident objects (with block headers).
  uint64_t bytes_used = 0;
  /// Bytes of memory that cannot be spilled now: objects being created or
  /// held by live handles.
  uint64_t bytes_pinned = 0;
  /// Bytes in spill files.
  uint64_t bytes_spilled = 0;
  /// Bound of the spill files.
  uint64_t spill_limit = 0;
  /// Largest object that fits in memory right now without spilling.
  uint64_t largest_free_block = 0;
  /// Times a process found the lock abandoned by a dead owner and repaired
  /// the store.
  uint64_t recoveries = 0;
  /// Objects in the store (resident or spilled, sealed or being written).
  uint64_t objects = 0;
  /// Processes attached to the store.
  uint64_t processes = 0;
  /// Of those, the ones that were alive when the totals were taken.
  uint64_t processes_alive = 0;
};

} // namespace ferry::store
