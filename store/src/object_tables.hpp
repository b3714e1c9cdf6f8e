// The object, holder and ticket tables of a mapped segment (private).
//
// `object_tables` is this process's view of the tables in a segment (it
// owns nothing: `segment` owns the mapping) plus the store's name for
// messages, and the basic operations on them: looking up an object,
// finding or adding the holder that carries one process's counts for one
// object, dropping counts and freeing what nobody references, and finding
// and retiring transfer tickets.
//
// Invariants kept by every operation (see layout.hpp for the fields):
// an object's `ref_count` is the sum of handles, tickets, pins and parked
// references over its holders, and it is freed (its block returned, its
// spill file removed) as soon as that sum drops to 0; a holder whose counts
// are all 0 is unlinked and freed. Markers are written last when an entry
// comes into being and cleared first when it goes (`commit()`), so a
// process that dies midway leaves primary entries that are whole or absent.
//
// Thread-safety: none of its own. Every function ending in `_locked`
// REQUIRES: the caller holds the segment's lock (`guard`). Other processes
// see the changes when they next take the lock.
#pragma once

#include "layout.hpp"

#include "ferry/store/object_id.hpp"

#include <caf/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace ferry::store::detail {

struct object_tables {
  object_tables() = default;

  /// Views the tables of the segment whose published header is `header`,
  /// mapped at `base`; `name` names the store in messages.
  object_tables(segment_header* header, std::byte* base, std::string name);

  /// Returns the slot of object `id`, or null if there is no such object.
  slot_entry* lookup_locked(object_id id) noexcept;

  /// Returns the holder of `process` for object `slot`, or npos32.
  uint32_t find_holder_locked(uint32_t slot, uint32_t process) noexcept;

  /// Returns the holder of `process` for object `slot`, adding one with all
  /// counts 0 if there is none.
  caf::expected<uint32_t> find_or_add_holder_locked(uint32_t slot,
                                                    uint32_t process);

  /// Returns the holder of `process` for object `id`, which the caller
  /// found in `slot`, adding one with all counts 0 if there is none. Fails
  /// with `object_not_found` when `slot` no longer holds `id`.
  caf::expected<uint32_t> holder_of_live_locked(uint32_t slot, object_id id,
                                                uint32_t process);

  /// Unlinks and frees `holder` if all its counts are 0.
  void release_holder_if_empty_locked(uint32_t holder) noexcept;

  /// Drops one handle of `holder` on object `slot`, freeing what that
  /// leaves unreferenced.
  void drop_handle_locked(uint32_t slot, uint32_t holder) noexcept;

  /// Frees object `slot`: its block, its spill file, its slot.
  void free_object_locked(uint32_t slot) noexcept;

  /// Frees object `slot` if it exists and nothing references it.
  void free_object_if_unreferenced_locked(uint32_t slot) noexcept;

  /// Returns the bytes of resident blocks that cannot be spilled now
  /// (objects being created or viewed by a live handle).
  uint64_t bytes_pinned_locked() const noexcept;

  /// Returns the index of the live ticket entry matching `ticket`, or npos32.
  uint32_t find_ticket_locked(const transfer_ticket& ticket) const noexcept;

  /// Retires the ticket entry `index`: frees it and drops the reference it
  /// carried from its object's count and its exporter's holder. Returns the
  /// object's slot (which the caller frees if it is now unreferenced).
  uint32_t retire_ticket_locked(uint32_t index) noexcept;

  /// Returns the path of the spill file of object `id`.
  std::string spill_path(uint64_t id) const;

  /// Returns "object <id> of store '<name>'" for messages.
  std::string describe(object_id id) const;

  segment_header* hdr = nullptr;
  process_entry* procs = nullptr;
  slot_entry* slots = nullptr;
  holder_entry* holders = nullptr;
  ticket_entry* tickets = nullptr;
  /// Start of the data region.
  std::byte* data = nullptr;
  std::string name;
};

} // namespace ferry::store::detail
