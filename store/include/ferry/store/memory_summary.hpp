// A snapshot of a store's objects and figures, like `ray memory`.
//
// `object_store::memory_summary()` takes it under the store's lock, so it is
// consistent at one instant; other processes may change the store right
// after. `to_string` renders it as the table the `ferry-store` tool prints.
// Plain values.
#pragma once

#include "ferry/store/fwd.hpp"
#include "ferry/store/object_id.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ferry::store {

/// One process's references to one object.
struct holder_info {
  /// The holding process.
  int32_t pid = 0;
  /// Live `object_ref`s (and an unsealed builder) of that process.
  uint32_t handles = 0;
  /// References the process exported in transfer tickets not yet redeemed.
  uint32_t in_transit = 0;
  /// 1 if the process pinned the object by out-of-band serialization.
  uint32_t pins = 0;
  /// Live `parked_ref`s of that process (references that allow spilling).
  uint32_t parked = 0;
};

/// One object of the store.
struct object_info {
  /// The object's id.
  object_id id{};
  /// Payload size in bytes.
  uint64_t size = 0;
  /// Total references on the host (handles + in transit + pins + parked).
  uint64_t ref_count = 0;
  /// False while a builder still writes the object.
  bool sealed = false;
  /// True if some process pinned the object (out-of-band serialization).
  bool pinned = false;
  /// True if the object lives in a spill file, not in memory.
  bool spilled = false;
  /// Who holds the references.
  std::vector<holder_info> holders;
};

/// One attached process.
struct process_info {
  /// Its pid.
  int32_t pid = 0;
  /// True if the process was alive when the snapshot was taken.
  bool alive = false;
};

/// A snapshot of the whole store.
struct memory_summary {
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
  /// Directory of the spill files (chosen by the store's creator).
  std::string spill_directory;
  /// Largest object that fits in memory right now without spilling.
  uint64_t largest_free_block = 0;
  /// Number of times a process found the lock abandoned by a dead owner and
  /// repaired the store.
  uint64_t recoveries = 0;
  /// Every object, ordered by id.
  std::vector<object_info> objects;
  /// Every attached process.
  std::vector<process_info> processes;
};

/// Renders `x` as a table of objects followed by the totals.
std::string to_string(const memory_summary& x);

} // namespace ferry::store
