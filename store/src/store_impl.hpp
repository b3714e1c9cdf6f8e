// Process-local side of an attached store (private).
//
// `store_impl` is this process's attachment to one store. It composes the
// parts that live in their own files: the mapping of the segment
// (segment.hpp), the view of its tables (object_tables.hpp), this
// process's entry in the process table (process_table.hpp), and the reaper
// thread (reaper.hpp); the store lock is guard.hpp's, spilling spill.hpp's,
// crash repair recovery.hpp's. What it adds itself is the object protocol
// on top: creating, sealing and getting objects, counting handles and
// parked references, exporting and redeeming transfer tickets, pinning.
//
// Handles (`object_ref`, `object_builder`, `parked_ref`, `object_store`)
// share it through `std::shared_ptr`, so the mapping outlives every handle,
// and one attachment per store name is shared by all handles of the
// process. When the last handle goes, the destructor stops the reaper and
// unregisters the process, dropping whatever the process still holds there
// (pins, tickets), exactly as the reaper would after its death. If no other
// live process is registered then and the store is not persistent, it
// also reaps the dead ones and retires the segment (segment.hpp), so the
// store's memory goes with its last process; an attach that meets a
// retired segment starts over with a new one.
//
// Thread-safety: every member function may be called from any thread; all
// segment state is accessed under the segment's robust mutex (`guard`),
// except an object's payload, which never moves or changes while a handle
// views it. Other processes see each change when they next take the lock.
#pragma once

#include "layout.hpp"
#include "object_tables.hpp"
#include "process_identity.hpp"
#include "reaper.hpp"
#include "segment.hpp"

#include "ferry/store/memory_summary.hpp"
#include "ferry/store/object_builder.hpp"
#include "ferry/store/object_id.hpp"
#include "ferry/store/object_ref.hpp"
#include "ferry/store/store_config.hpp"
#include "ferry/store/store_totals.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ferry::store::detail {

class store_impl : public std::enable_shared_from_this<store_impl> {
public:
  /// Returns the attachment of this process to `cfg.name`, creating it (and
  /// perhaps the segment) if needed.
  [[nodiscard]] static caf::expected<std::shared_ptr<store_impl>>
  attach(const store_config& cfg);

  /// Returns this process's attachment with the given token, or null.
  static std::shared_ptr<store_impl> find_by_token(uint64_t token);

  /// Removes the segment `name` and its spill files.
  [[nodiscard]] static caf::error remove(const std::string& name);

  ~store_impl();

  store_impl(const store_impl&) = delete;
  store_impl& operator=(const store_impl&) = delete;

  const std::string& name() const noexcept { return name_; }

  /// Returns true if the segment this process mapped is still the one named
  /// `name()` (not removed or replaced since).
  bool current() const noexcept { return segment_.current(); }

  uint64_t token() const noexcept { return tables_.hdr->token; }

  uint64_t capacity() const noexcept { return tables_.hdr->alloc.capacity; }

  bool allow_out_of_band() const noexcept {
    return cfg_.allow_out_of_band_ref_serialization;
  }

  // -- objects ---------------------------------------------------------------

  [[nodiscard]] caf::expected<object_builder> create(uint64_t size);

  [[nodiscard]] caf::expected<object_ref> seal(uint32_t slot, uint32_t holder,
                                               object_id id);

  void abandon(uint32_t slot, uint32_t holder, object_id id) noexcept;

  [[nodiscard]] caf::expected<object_ref> get(object_id id);

  /// Adds a handle to an object this process already holds (copy).
  void add_handle(uint32_t slot, uint32_t holder) noexcept;

  /// Drops a handle (destructor of object_ref).
  void drop_handle(uint32_t slot, uint32_t holder) noexcept;

  uint64_t ref_count(uint32_t slot, object_id id);

  /// Adds a parked reference of this process to `id`; returns its holder.
  [[nodiscard]] caf::expected<uint32_t> park(uint32_t slot, object_id id);

  /// Adds a parked reference through an existing holder (copy).
  void add_parked(uint32_t slot, uint32_t holder) noexcept;

  /// Drops a parked reference (destructor of parked_ref).
  void drop_parked(uint32_t slot, uint32_t holder) noexcept;

  // -- transfer and pins -----------------------------------------------------

  [[nodiscard]] caf::expected<transfer_ticket> export_ticket(uint32_t slot,
                                                             object_id id);

  [[nodiscard]] caf::expected<object_ref> redeem(const transfer_ticket& ticket);

  [[nodiscard]] caf::error cancel(const transfer_ticket& ticket);

  /// Pins `id` for this process; returns true if it was not pinned before.
  [[nodiscard]] caf::expected<bool> pin(uint32_t slot, object_id id);

  [[nodiscard]] caf::error unpin(object_id id);

  // -- maintenance -----------------------------------------------------------

  [[nodiscard]] caf::expected<size_t> reap();

  /// Returns how many dead processes `attach` reaped when it made this
  /// attachment.
  size_t reaped_at_attach() const noexcept { return reaped_at_attach_; }

  [[nodiscard]] caf::expected<ferry::store::memory_summary> summary();

  [[nodiscard]] caf::expected<ferry::store::store_totals> totals();

  /// Test hook: called inside `create` while holding the lock, after the
  /// object was allocated.
  static void set_create_hook(void (*hook)()) noexcept;

  /// Test hook: called when spill or restore I/O starts (lock released).
  static void set_io_hook(void (*hook)()) noexcept;

private:
  struct attach_tag {};

public:
  store_impl(attach_tag, const store_config& cfg);

private:
  /// Drops everything this process holds and frees its process entry.
  /// REQUIRES: the lock.
  void unregister_locked() noexcept;

  /// Retires the segment if it is not persistent and no other live process
  /// is registered, reaping the dead ones first. REQUIRES: the lock, and
  /// this process unregistered.
  void retire_if_unused_locked() noexcept;

  /// Allocates an object of `size` bytes in the tables (no pages yet).
  caf::expected<object_builder> create_locked(uint64_t size);

  object_ref make_ref(uint32_t slot, uint32_t holder) noexcept;

  store_config cfg_;
  std::string name_;
  process_identity identity_;
  segment segment_;
  /// View of the tables; valid once `segment_` is open.
  object_tables tables_;
  /// This process's entry in the process table, or npos32.
  uint32_t self_ = npos32;
  /// Dead processes reaped by the attach that made this attachment.
  size_t reaped_at_attach_ = 0;
  reaper reaper_;
};

} // namespace ferry::store::detail
