// The per-host shared-memory object store.
//
// An `object_store` is this process's handle to a named shared-memory
// segment (POSIX shm, mode 0600, on Boost.Interprocess) holding immutable
// objects: `create`/`put` write and seal one, `get` returns a counted handle
// whose bytes are read in place. Every process of the same user on the host
// that attaches to the same name sees the same objects; counts are kept in
// the segment, per process, so the handles of all processes count together.
// The segment holds offsets only, never pointers.
//
// Usage:
//
//     ferry::store::store_config cfg;            // name "ferry-<uid>"
//     auto store = ferry::store::object_store::attach(cfg);
//     if (!store) return store.error();
//     auto ref = store->put(bytes);              // expected<object_ref>
//     auto again = store->get(ref->id());        // same bytes, no copy
//
// Locking and crash safety: all bookkeeping in the segment (object table,
// holder table, tickets, process table, allocator) is guarded by one
// process-shared *robust* pthread mutex. No lock is taken while reading an
// object's bytes. If a process dies holding the lock (e.g. killed inside
// `create`), the next locker gets EOWNERDEAD and repairs the segment before
// going on: derived state (per-object totals, holder lists, free lists,
// allocator bins and block headers) is rebuilt from the primary entries,
// whose commit markers are written last, so a half-done operation is either
// complete or absent. Nobody is ever wedged. Counts of dead processes
// (handles, unsealed builders, tickets they exported, pins) are reclaimed by
// the reaper: on every attach, every `reaper_interval` in a background
// thread, and on `reap()`. Processes are identified by pid and start time,
// so a reused pid is not mistaken for the dead process. Pids mean something
// only within one PID namespace: all processes of a store must share one,
// and `attach` refuses a segment created in another PID namespace
// (`errc::foreign_pid_namespace`; e.g. containers sharing /dev/shm).
//
// Memory: a segregated-fit allocator with coalescing reuses freed blocks. Pages
// are allocated when an object first needs them (before `create` returns, so a
// full /dev/shm is `store_full`, not SIGBUS) and stay for reuse; with
// `prefault`, the whole segment is allocated and mapped at attach. The last
// process to leave a store that is not `persistent` removes it. When an
// allocation does not fit, the store spills the least recently used sealed
// objects that no live handle views (objects referenced only by `parked_ref`s,
// tickets in transit or pins: referenced but not in use, as in Ray) to files in
// the spill directory and restores them on the next
// `get`/`redeem`/`parked_ref::get`. An `object_ref` is a view of the memory, so
// its object stays resident while it lives. The file I/O runs without the lock
// (the object is marked `spilling`/`restoring` and held by the process doing
// the I/O); a process killed during the I/O is rolled back by the reaper. With
// spilling off, nothing to spill, or the spill bound reached, `create` (and a
// `get` or `redeem` that must restore a spilled object) fails with
// `errc::store_full` naming capacity, bytes used, bytes pinned and the largest
// free block.
//
// Thread-safety: all member functions may be called from any thread at
// once; `object_store` itself is a movable handle (moving is not
// synchronized with calls on the same instance). Not fork-safe: a forked
// child must not use, copy or destroy the store or any handle it inherited
// (they still act for the parent), and `attach` in the child returns the
// parent's inherited attachment; the child should `exec` a new program
// (which attaches anew) or leave with `_exit`.
#pragma once

#include "ferry/store/fwd.hpp"
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
#include <span>
#include <string>

namespace ferry::store {

/// A process's handle to an attached store. See the header comment.
class object_store {
public:
  /// Creates the segment named `cfg.name` (mode 0600) or opens it if it
  /// exists, registers this process, and reaps dead processes. Attaching the
  /// same name twice in one process shares one attachment while its segment
  /// exists (the first configuration's process-local settings apply).
  [[nodiscard]] static caf::expected<object_store>
  attach(const store_config& cfg);

  /// Removes the segment named `name` and its spill files. Processes that
  /// are attached keep their mapping; new attaches create a new store.
  [[nodiscard]] static caf::error remove(const std::string& name);

  /// Constructs a detached handle.
  object_store() noexcept = default;

  object_store(const object_store&) = default;
  object_store& operator=(const object_store&) = default;
  object_store(object_store&&) noexcept = default;
  object_store& operator=(object_store&&) noexcept = default;
  ~object_store() = default;

  /// Returns true if the handle is attached.
  explicit operator bool() const noexcept { return impl_ != nullptr; }

  /// Drops this handle. The process stays attached while other handles,
  /// `object_ref`s or builders live; when the last goes, the process
  /// unregisters and drops its pins and tickets, like an exiting process.
  void detach() noexcept;

  /// Returns the store's name.
  const std::string& name() const noexcept;

  /// Returns the store's random token (names the store in serialized handles).
  uint64_t token() const noexcept;

  /// Returns the capacity for objects in bytes.
  uint64_t capacity() const noexcept;

  /// Allocates an unsealed object of `size` bytes (zero is allowed),
  /// spilling if needed. Fails with `store_full`, `table_full`.
  [[nodiscard]] caf::expected<object_builder> create(uint64_t size);

  /// Creates, fills and seals an object with a copy of `bytes`.
  [[nodiscard]] caf::expected<object_ref> put(std::span<const std::byte> bytes);

  /// Returns a handle to the sealed object `id`, restoring it from its spill
  /// file if needed. Fails with `object_not_found` (never existed or freed),
  /// `object_not_sealed`, or, when restoring, `store_full`/`spill_failed`.
  [[nodiscard]] caf::expected<object_ref> get(object_id id);

  /// Takes over the reference named by `ticket` (no count is added) and
  /// returns it as a handle. Works once per ticket; fails with
  /// `ticket_not_found` after a redeem or cancel, or once the exporting
  /// process died and was reaped.
  [[nodiscard]] caf::expected<object_ref> redeem(const transfer_ticket& ticket);

  /// Drops the reference named by `ticket` (e.g. the link died or the
  /// receiver refused the message). Fails with `ticket_not_found` if it was
  /// already redeemed or cancelled.
  [[nodiscard]] caf::error cancel(const transfer_ticket& ticket);

  /// Drops this process's out-of-band pin of `id`; frees the object if that
  /// was its last reference. Fails with `not_pinned`.
  [[nodiscard]] caf::error unpin(object_id id);

  /// Frees the counts of dead processes now and returns how many processes
  /// were reaped.
  [[nodiscard]] caf::expected<size_t> reap();

  /// Returns how many dead processes were reaped when this process attached
  /// (`attach` reaps before it returns; a later `reap()` counts only those
  /// that died since). Zero for a detached handle.
  size_t reaped_at_attach() const noexcept;

  /// Returns a snapshot of all objects and figures.
  [[nodiscard]] caf::expected<ferry::store::memory_summary> memory_summary();

  /// Returns the store's figures without its objects: cheap enough to
  /// sample every second whatever the number of objects.
  [[nodiscard]] caf::expected<ferry::store::store_totals> totals();

  /// Returns the store's process-local implementation (for the framework's
  /// glue and `in_band_scope`).
  const std::shared_ptr<detail::store_impl>& impl() const noexcept {
    return impl_;
  }

private:
  explicit object_store(std::shared_ptr<detail::store_impl> impl) noexcept;

  std::shared_ptr<detail::store_impl> impl_;
};

} // namespace ferry::store
