// Process-local side of an attached store (private).
//
// `store_impl` owns this process's mapping of the segment, its entry in the
// process table, and the reaper thread. Handles (`object_ref`,
// `object_builder`, `object_store`) share it through `std::shared_ptr`, so the
// mapping outlives every handle. When the last handle goes, the destructor
// unregisters the process, dropping whatever the process still holds there
// (pins, tickets), exactly as the reaper would after its death.
//
// Thread-safety: every member function may be called from any thread; all
// segment state is accessed under the segment's robust mutex (`guard`).
#pragma once

#include "allocator.hpp"
#include "layout.hpp"

#include "ferry/store/memory_summary.hpp"
#include "ferry/store/object_builder.hpp"
#include "ferry/store/object_id.hpp"
#include "ferry/store/object_ref.hpp"
#include "ferry/store/store_config.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ferry::store::detail {

/// Returns the start time of `pid` (clock ticks since boot), or 0 if the
/// process does not exist.
uint64_t process_start_time(int32_t pid) noexcept;

/// Reads the state (field 3) and start time (field 22) of `pid` from
/// /proc/<pid>/stat; returns false (with errno set) if that fails.
bool read_process_stat(int32_t pid, char& state, uint64_t& start_time) noexcept;

/// Returns the PID namespace of this process (the inode of
/// /proc/self/ns/pid), or 0 if it cannot be read.
uint64_t pid_namespace() noexcept;

class store_impl : public std::enable_shared_from_this<store_impl> {
public:
  /// Returns the attachment of this process to `cfg.name`, creating it (and
  /// perhaps the segment) if needed.
  static caf::expected<std::shared_ptr<store_impl>>
  attach(const store_config& cfg);

  /// Returns this process's attachment with the given token, or null.
  static std::shared_ptr<store_impl> find_by_token(uint64_t token);

  /// Removes the segment `name` and its spill files.
  static caf::error remove(const std::string& name);

  ~store_impl();

  store_impl(const store_impl&) = delete;
  store_impl& operator=(const store_impl&) = delete;

  const std::string& name() const noexcept {
    return name_;
  }

  /// Returns true if the segment this process mapped is still the one named
  /// `name()` (not removed or replaced since).
  bool current() const noexcept;

  uint64_t token() const noexcept {
    return hdr_->token;
  }

  uint64_t capacity() const noexcept {
    return hdr_->alloc.capacity;
  }

  bool allow_out_of_band() const noexcept {
    return cfg_.allow_out_of_band_ref_serialization;
  }

  // -- objects ---------------------------------------------------------------

  caf::expected<object_builder> create(uint64_t size);

  caf::expected<object_ref> seal(uint32_t slot, uint32_t holder,
                                 object_id id);

  void abandon(uint32_t slot, uint32_t holder, object_id id) noexcept;

  caf::expected<object_ref> get(object_id id);

  /// Adds a handle to an object this process already holds (copy).
  void add_handle(uint32_t slot, uint32_t holder) noexcept;

  /// Drops a handle (destructor of object_ref).
  void drop_handle(uint32_t slot, uint32_t holder) noexcept;

  uint64_t ref_count(uint32_t slot, object_id id);

  /// Adds a parked reference of this process to `id`; returns its holder.
  caf::expected<uint32_t> park(uint32_t slot, object_id id);

  /// Adds a parked reference through an existing holder (copy).
  void add_parked(uint32_t slot, uint32_t holder) noexcept;

  /// Drops a parked reference (destructor of parked_ref).
  void drop_parked(uint32_t slot, uint32_t holder) noexcept;

  // -- transfer and pins -----------------------------------------------------

  caf::expected<transfer_ticket> export_ticket(uint32_t slot, object_id id);

  caf::expected<object_ref> redeem(const transfer_ticket& ticket);

  caf::error cancel(const transfer_ticket& ticket);

  /// Pins `id` for this process; returns true if it was not pinned before.
  caf::expected<bool> pin(uint32_t slot, object_id id);

  caf::error unpin(object_id id);

  // -- maintenance -----------------------------------------------------------

  caf::expected<size_t> reap();

  caf::expected<ferry::store::memory_summary> summary();

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
  class guard;
  friend class guard;

  /// Creates or opens the segment. `attempt` counts the starts over after
  /// the name went away while waiting for a creator (see the definition).
  caf::error open_segment(int attempt = 1);
  caf::error init_segment(uint64_t segment_size, const store_config& cfg);
  caf::error map_segment();
  void populate() noexcept;
  caf::error register_process();
  void start_reaper();

  // All functions ending in `_locked` require the lock.

  /// Repairs the segment after its lock owner died.
  void recover_locked() noexcept;
  void reap_process_locked(uint32_t process) noexcept;
  /// Undoes the spill I/O of `slot` whose process will never finish it: a
  /// spill leaves the object in memory, a restore in its file.
  void roll_back_io_locked(uint32_t slot) noexcept;
  void unregister_locked() noexcept;

  slot_entry* lookup_locked(object_id id) noexcept;
  uint32_t find_holder_locked(uint32_t slot, uint32_t process) noexcept;
  caf::expected<uint32_t> find_or_add_holder_locked(uint32_t slot,
                                                    uint32_t process);
  void release_holder_if_empty_locked(uint32_t holder) noexcept;
  void drop_handle_locked(uint32_t slot, uint32_t holder) noexcept;
  void free_object_locked(uint32_t slot) noexcept;
  void free_object_if_unreferenced_locked(uint32_t slot) noexcept;

  /// Allocates a block for `payload` bytes, spilling LRU objects if needed
  /// (which releases the lock during file I/O). Never spills `keep`.
  caf::expected<std::pair<uint64_t, uint64_t>>
  allocate_locked(guard& g, uint64_t payload, uint32_t keep);

  /// Writes the object in `slot` to its spill file without the lock and
  /// frees its memory, unless a handle appeared meanwhile.
  caf::error spill_locked(guard& g, uint32_t slot);

  /// Adds a handle of this process to object `id`, restoring it from its
  /// spill file if needed (without the lock during I/O); returns {slot,
  /// holder}.
  caf::expected<std::pair<uint32_t, uint32_t>> acquire_locked(guard& g,
                                                              object_id id);
  std::string spill_path(uint64_t id) const;
  void clean_spill_directory_locked() noexcept;

  caf::error store_full_locked(uint64_t payload, const std::string& why);
  uint64_t bytes_pinned_locked() const noexcept;

  object_ref make_ref(uint32_t slot, uint32_t holder) noexcept;

  std::string describe(object_id id) const;

  store_config cfg_;
  std::string name_;
  boost::interprocess::shared_memory_object shm_;
  boost::interprocess::mapped_region region_;
  bool created_ = false;
  segment_header* hdr_ = nullptr;
  std::byte* base_ = nullptr;
  std::byte* data_ = nullptr;
  process_entry* procs_ = nullptr;
  slot_entry* slots_ = nullptr;
  holder_entry* holders_ = nullptr;
  ticket_entry* tickets_ = nullptr;
  uint32_t self_ = npos32;
  int32_t pid_ = 0;
  uint64_t start_time_ = 0;
  uint64_t pid_namespace_ = 0;

  std::mutex reaper_mtx_;
  std::condition_variable reaper_cv_;
  bool stopping_ = false;
  std::thread reaper_;
};

} // namespace ferry::store::detail
