// One process's mapping of a store's shared-memory segment (private).
//
// `segment` owns the POSIX shared-memory object `/dev/shm/<name>` as this
// process opened it and its mapping; the layout inside is layout.hpp's.
// `open` either creates the segment (sizing it, allocating its pages with
// `prefault`, formatting the header, tables and allocator, and publishing
// the header by writing its magic last) or opens an existing one, waiting
// for its creator to publish the header as long as the creator lives, and
// refusing a segment of another layout or another PID namespace. A creator
// that fails removes the name, so no half-made segment stays behind it.
//
// Invariants: after a successful `open`, `header()` points to a published
// header of this build's layout and stays mapped until the `segment` goes;
// after a failed one, `header()` is null. The mapping never moves.
//
// Thread-safety: `open` runs once, before the segment is shared between
// threads; afterwards the object is only read (`header`, `base`, `current`),
// which is safe from any thread. The segment's contents are guarded by its
// robust mutex (see guard.hpp), not by this class. Other processes see the
// segment under its name from creation on, but use it only once the magic
// is written.
#pragma once

#include "layout.hpp"
#include "process_identity.hpp"

#include "ferry/store/store_config.hpp"

#include <caf/error.hpp>

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>

#include <cstddef>
#include <string>

namespace ferry::store::detail {

/// Makes sure shared memory backs the bytes [first, first + size) of a
/// mapped segment, allocating pages not allocated yet, so that writing
/// there cannot end in SIGBUS. Returns 0, or ENOSPC when /dev/shm cannot
/// hold those pages (or ENOMEM when memory ran out). Best effort on
/// kernels without MADV_POPULATE_WRITE (before Linux 5.14): returns 0 and
/// the pages are allocated on first write, as without this call.
[[nodiscard]] int back_pages(std::byte* first, uint64_t size) noexcept;

class segment {
public:
  segment() = default;

  segment(const segment&) = delete;
  segment& operator=(const segment&) = delete;

  /// Creates the segment `cfg.name` (unless `cfg.open_only`) or opens it if
  /// it exists. `self` is written into the header of a segment created here.
  [[nodiscard]] caf::error open(const store_config& cfg,
                                const process_identity& self);

  /// Returns true if the segment mapped here is still the one named
  /// `/dev/shm/<name>` (not removed or replaced since).
  bool current() const noexcept;

  /// Returns the header, or null if `open` did not succeed.
  segment_header* header() const noexcept { return hdr_; }

  /// Returns the start of the mapping (the header's address once open).
  std::byte* base() const noexcept { return base_; }

  /// Removes the segment `name` and the spill files of its store.
  [[nodiscard]] static caf::error remove(const std::string& name);

  /// Marks the segment retired and removes its name, if the name still
  /// names this segment. REQUIRES: the caller holds the store lock, and no
  /// other live process is registered.
  void retire_locked() noexcept;

private:
  /// Creates or opens the segment. `attempt` counts the starts over after
  /// the name went away while waiting for a creator.
  caf::error open(const store_config& cfg, const process_identity& self,
                  int attempt);

  /// Sizes, maps and formats the segment just created here; removes the
  /// name if that fails.
  caf::error init(const store_config& cfg, const process_identity& self);

  /// Opens the existing segment and waits for its creator to publish it.
  caf::error open_existing(const store_config& cfg,
                           const process_identity& self, int attempt);

  caf::error map();

  void populate(bool prefault) noexcept;

  std::string name_;
  boost::interprocess::shared_memory_object shm_;
  boost::interprocess::mapped_region region_;
  segment_header* hdr_ = nullptr;
  std::byte* base_ = nullptr;
};

} // namespace ferry::store::detail
