// Spilling and restoring objects; see spill.hpp.
#include "spill.hpp"

#include "allocator.hpp"
#include "fail.hpp"
#include "process_identity.hpp"
#include "process_table.hpp"
#include "segment.hpp"
#include "spill_file.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

namespace ferry::store::detail {

namespace {

std::atomic<void (*)()> io_hook{nullptr};

void run_io_hook() {
  if (auto hook = io_hook.load())
    hook();
}

caf::error store_full_locked(object_tables& t, uint64_t payload,
                             const std::string& why) {
  allocator alloc{t.hdr->alloc, t.data};
  return fail(
    errc::store_full, "store '", t.name, "' cannot hold an object of ", payload,
    " bytes: ", why, " (capacity ", t.hdr->alloc.capacity, " bytes, used ",
    t.hdr->alloc.used, " bytes, pinned ", t.bytes_pinned_locked(),
    " bytes, largest free block ", alloc.largest_free_payload(),
    " bytes, spilled ", t.hdr->bytes_spilled, " of ", t.hdr->spill_limit,
    " bytes). Fix: drop handles no longer needed, let transfers "
    "complete, enable spilling or raise spill_limit, or create the "
    "store with a larger capacity");
}

/// Writes the object in `slot` to its spill file without the lock and
/// frees its memory, unless a handle appeared meanwhile.
caf::error spill_locked(guard& g, object_tables& t, uint32_t self,
                        uint32_t slot) {
  // Take a handle for the duration of the I/O, so the object can neither be
  // freed nor spilled twice while the lock is released.
  auto holder = t.find_or_add_holder_locked(slot, self);
  if (!holder)
    return std::move(holder.error());
  auto& s = t.slots[slot];
  t.holders[*holder].handles += 1;
  s.handles += 1;
  s.ref_count += 1;
  s.io_process = self;
  commit();
  s.state = slot_state::spilling;
  auto id = s.id;
  auto size = s.size;
  auto block = s.block;
  auto path = t.spill_path(id);
  g.unlock();
  run_io_hook();
  auto err = write_spill_file(t.name, t.hdr->spill_directory, path,
                              t.data + block + block_header_size, size);
  if (!g.lock())
    return g.error();
  bool spilled = false;
  if (s.state == slot_state::spilling) {
    if (!err && s.handles == 1 &&
        t.hdr->bytes_spilled + size <= t.hdr->spill_limit) {
      s.state = slot_state::spilled;
      commit();
      s.block = npos64;
      t.hdr->bytes_spilled += size;
      allocator{t.hdr->alloc, t.data}.deallocate(block);
      spilled = true;
    } else {
      // Someone got a handle meanwhile (or the bound filled up): the object
      // stays in memory and the file goes.
      s.state = slot_state::sealed;
    }
  }
  // Cleared after the state changed: a process that dies in between leaves
  // the object in a settled state or names itself for the reaper.
  commit();
  s.io_process = npos32;
  if (!spilled)
    ::unlink(path.c_str());
  t.drop_handle_locked(slot, *holder);
  return err;
}

} // namespace

caf::expected<std::pair<uint64_t, uint64_t>>
allocate_locked(guard& g, object_tables& t, uint32_t self, uint64_t payload,
                uint32_t keep) {
  auto* hdr = t.hdr;
  // Compared before rounding up to a block, which cannot overflow here: the
  // largest payload is one block spanning the whole data region.
  auto largest = hdr->alloc.capacity - block_header_size;
  if (payload > largest)
    return fail(
      errc::store_full, "store '", t.name, "' cannot hold an object of ",
      payload, " bytes: the object is larger than the store (capacity ",
      hdr->alloc.capacity, " bytes, the largest object that fits ", largest,
      " bytes). Fix: create the store with a larger "
      "capacity or split the object");
  for (;;) {
    auto [offset, size] = allocator{hdr->alloc, t.data}.allocate(payload);
    if (offset != npos64)
      return std::pair{offset, size};
    if (hdr->spilling == 0)
      return store_full_locked(t, payload, "spilling is off");
    // Least recently used sealed object that no live handle views.
    auto victim = npos32;
    bool over_bound = false;
    for (uint32_t i = 0; i < hdr->max_objects; ++i) {
      auto& s = t.slots[i];
      if (s.id == 0 || i == keep || s.state != slot_state::sealed ||
          s.handles != 0 || s.ref_count == 0)
        continue;
      if (hdr->bytes_spilled + s.size > hdr->spill_limit) {
        over_bound = true;
        continue;
      }
      if (victim == npos32 || s.last_use < t.slots[victim].last_use)
        victim = i;
    }
    if (victim == npos32)
      return store_full_locked(
        t, payload,
        over_bound ? "the spill directory's bound is reached"
                   : "no object can be spilled (all resident objects are "
                     "being created or held by live handles)");
    if (auto err = spill_locked(g, t, self, victim))
      return err;
  }
}

caf::expected<std::pair<uint32_t, uint32_t>>
acquire_locked(guard& g, object_tables& t, uint32_t self, object_id id) {
  auto* hdr = t.hdr;
  for (;;) {
    auto* s = t.lookup_locked(id);
    if (s == nullptr)
      return fail(errc::object_not_found, "store '", t.name, "' has no object ",
                  to_string(id),
                  " (never created, or freed when its last reference "
                  "dropped)");
    auto slot = static_cast<uint32_t>(s - t.slots);
    switch (s->state) {
    case slot_state::creating:
      return fail(errc::object_not_sealed, t.describe(id),
                  " is still being written; get it after its builder "
                  "seals it");
    case slot_state::sealed:
    case slot_state::spilling: {
      auto holder = t.find_or_add_holder_locked(slot, self);
      if (!holder)
        return std::move(holder.error());
      t.holders[*holder].handles += 1;
      s->handles += 1;
      s->ref_count += 1;
      s->last_use = ++hdr->tick;
      return std::pair{slot, *holder};
    }
    case slot_state::restoring: {
      // Another process (or thread) reads the file: wait for it, unless
      // it died doing so, or no attached process does it any more.
      auto io = s->io_process;
      if (io >= hdr->max_processes || t.procs[io].pid == 0) {
        roll_back_io_locked(t, slot);
        continue;
      }
      if (io != self &&
          !process_alive(t.procs[io].pid, t.procs[io].start_time)) {
        reap_process_locked(t, io);
        continue;
      }
      g.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds{100});
      if (!g.lock())
        return g.error();
      continue;
    }
    default:
      break;
    }
    // Spilled: allocate (perhaps spilling others, which releases the lock),
    // then read the file without the lock.
    auto size = s->size;
    auto block = allocate_locked(g, t, self, size, slot);
    if (!block)
      return std::move(block.error());
    auto [offset, block_size] = *block;
    s = &t.slots[slot];
    if (s->id != static_cast<uint64_t>(id) || s->state != slot_state::spilled) {
      allocator{hdr->alloc, t.data}.deallocate(offset);
      continue; // changed while the lock was released: look again
    }
    auto holder = t.find_or_add_holder_locked(slot, self);
    if (!holder) {
      allocator{hdr->alloc, t.data}.deallocate(offset);
      return std::move(holder.error());
    }
    t.holders[*holder].handles += 1;
    s->handles += 1;
    s->ref_count += 1;
    s->block = offset;
    s->block_size = block_size;
    s->io_process = self;
    commit();
    s->state = slot_state::restoring;
    auto path = t.spill_path(s->id);
    g.unlock();
    run_io_hook();
    auto* target = t.data + offset + block_header_size;
    auto err = back_pages(target, size);
    auto ok = err == 0 && read_spill_file(path, target, size);
    if (err == 0 && !ok)
      err = errno;
    if (!g.lock())
      return g.error();
    // The state changes first and `io_process` is cleared last (as in
    // spill_locked): a process that dies in between is named by the slot,
    // so the reaper settles the object instead of leaving it `restoring`
    // with nobody to finish it.
    if (ok) {
      s->state = slot_state::sealed;
      hdr->bytes_spilled -= size;
      s->last_use = ++hdr->tick;
      commit();
      s->io_process = npos32;
      ::unlink(path.c_str());
      return std::pair{slot, *holder};
    }
    s->state = slot_state::spilled;
    commit();
    s->block = npos64;
    allocator{hdr->alloc, t.data}.deallocate(offset);
    commit();
    s->io_process = npos32;
    t.drop_handle_locked(slot, *holder);
    return fail(errc::spill_failed, "store '", t.name, "': cannot restore ",
                t.describe(id), " from ", path, ": ", errno_text(err));
  }
}

void roll_back_io_locked(object_tables& t, uint32_t slot) noexcept {
  auto& s = t.slots[slot];
  if (s.state == slot_state::spilling) {
    ::unlink((t.spill_path(s.id) + ".tmp").c_str());
    ::unlink(t.spill_path(s.id).c_str());
    s.state = slot_state::sealed;
  } else if (s.state == slot_state::restoring) {
    auto block = s.block;
    s.state = slot_state::spilled;
    commit();
    s.block = npos64;
    if (block != npos64)
      allocator{t.hdr->alloc, t.data}.deallocate(block);
  }
  commit();
  s.io_process = npos32;
}

void set_spill_io_hook(void (*hook)()) noexcept {
  io_hook.store(hook);
}

} // namespace ferry::store::detail
