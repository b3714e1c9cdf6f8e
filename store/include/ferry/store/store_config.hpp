// Configuration of one attachment to a ferry store.
//
// The first process that attaches creates the segment with the figures given
// here (capacity, table sizes, spill directory and bound); every later
// process opens the existing segment and uses the figures stored in it, so
// only the process-local fields (`prefault`, `allow_out_of_band_ref_...`,
// `reaper_interval`, `open_only`) matter for them. A plain value type.
//
// Memory: the segment reserves `capacity` bytes of /dev/shm but takes
// memory only as objects are written into it (or all at once with
// `prefault`), and it goes away with the last process that leaves it,
// unless the creator made it `persistent`.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ferry::store {

/// Settings for `object_store::attach`.
struct store_config {
  /// Returns the default store name, `ferry-<uid>`.
  static std::string default_name();

  /// Returns the default spill directory, `$TMPDIR/ferry-spill-<uid>` (or
  /// `/tmp/ferry-spill-<uid>` when `TMPDIR` is unset).
  static std::string default_spill_directory();

  /// Name of the shared-memory segment (no slash, at most 200 characters).
  /// Default: `default_name()`.
  std::string name = default_name();

  /// Bytes available for objects (the data region; bookkeeping comes on
  /// top), from 128 bytes to 2^57 - 64 bytes (128 PiB). Default: 256 MiB.
  uint64_t capacity = uint64_t{256} << 20;

  /// Maximum number of objects alive at once (sealed, being created or
  /// spilled). Default: 65536.
  uint32_t max_objects = 65536;

  /// Maximum number of transfer tickets in flight at once. Default: 16384.
  uint32_t max_tickets = 16384;

  /// Maximum number of processes attached at once. Default: 256.
  uint32_t max_processes = 256;

  /// Directory for spill files; empty means `default_spill_directory()`.
  std::string spill_directory;

  /// Maximum bytes of spill files at once. Default: 16 GiB.
  uint64_t spill_limit = uint64_t{16} << 30;

  /// Whether the store may spill objects to disk when memory runs out.
  /// Default: true.
  bool spilling = true;

  /// Whether to fault the whole segment in when attaching: the creator
  /// allocates all pages of the segment (so a /dev/shm too small for the
  /// capacity fails at attach), and every process populates its page tables.
  /// Costs about 1 s per GiB for the creator and keeps the whole capacity
  /// resident. Without it, each object's pages are allocated when the object
  /// is created (a full /dev/shm then fails that create with `store_full`)
  /// and stay allocated for reuse; the first write to fresh pages is slower
  /// than a warm memcpy, later ones are not. Default: false.
  bool prefault = false;

  /// Whether the segment stays in /dev/shm after the last process leaves
  /// it (for services whose processes come and go and want the store's
  /// memory kept warm). Otherwise the last process to leave removes it, so a
  /// program or test that exits takes its memory with it. Set by the
  /// creator. Default: false.
  bool persistent = false;

  /// Whether serializing an `object_ref` outside ferry's message path pins
  /// its object (with one warning) instead of failing. Process-local.
  /// Default: true.
  bool allow_out_of_band_ref_serialization = true;

  /// How often a background thread reaps the counts of dead processes; zero
  /// turns the thread off (attach and `object_store::reap` still reap).
  /// Process-local. Default: 1 s.
  std::chrono::milliseconds reaper_interval{1000};

  /// Only open an existing segment; never create one. Default: false.
  bool open_only = false;
};

} // namespace ferry::store
