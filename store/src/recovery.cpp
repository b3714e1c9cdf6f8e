// Rebuilding derived state after a lock owner died; see recovery.hpp.
#include "recovery.hpp"

#include "allocator.hpp"
#include "process_identity.hpp"
#include "process_table.hpp"
#include "spill.hpp"
#include "spill_file.hpp"

#include <unistd.h>

#include <filesystem>
#include <utility>
#include <vector>

namespace ferry::store::detail {

namespace {

void clean_spill_directory_locked(object_tables& t) noexcept {
  // Keeps the files of spilled objects and those that live processes are
  // writing or reading right now; removes everything else of this store
  // (and nothing of other stores sharing the directory).
  remove_spill_files(std::filesystem::path{t.hdr->spill_directory}, t.name,
                     [&t](const spill_file& file) {
                       auto* s = t.lookup_locked(object_id{file.id});
                       if (s != nullptr && !file.tmp)
                         return s->state == slot_state::spilled ||
                                s->state == slot_state::restoring ||
                                s->state == slot_state::spilling;
                       if (s != nullptr)
                         return s->state == slot_state::spilling;
                       return false;
                     });
}

} // namespace

void recover_locked(object_tables& t, uint32_t self) noexcept {
  auto& h = *t.hdr;
  auto* slots = t.slots;
  auto* holders = t.holders;
  auto* tickets = t.tickets;
  auto* procs = t.procs;
  // 1. Drop primary entries that point to nothing.
  for (uint32_t i = 0; i < h.max_tickets; ++i) {
    auto& x = tickets[i];
    if (x.id != 0 &&
        (x.slot >= h.max_objects || slots[x.slot].id != x.object ||
         x.process >= h.max_processes || procs[x.process].pid == 0))
      x.id = 0;
  }
  for (uint32_t i = 0; i < h.max_holders; ++i) {
    auto& x = holders[i];
    if (x.slot != npos32 &&
        (x.slot >= h.max_objects || slots[x.slot].id == 0 ||
         x.process >= h.max_processes || procs[x.process].pid == 0))
      x.slot = npos32;
  }
  // 2. Free list of holders, then per-object lists and totals.
  h.free_holder = npos32;
  for (uint32_t i = h.max_holders; i-- > 0;) {
    if (holders[i].slot == npos32) {
      holders[i].next = h.free_holder;
      h.free_holder = i;
    }
  }
  for (uint32_t i = 0; i < h.max_objects; ++i) {
    auto& s = slots[i];
    s.holders = npos32;
    s.ref_count = 0;
    s.handles = 0;
    s.pins = 0;
    if (s.state == slot_state::spilled)
      s.block = npos64; // a restore that died before its state change
  }
  for (uint32_t i = 0; i < h.max_holders; ++i) {
    auto& x = holders[i];
    if (x.slot == npos32)
      continue;
    auto& s = slots[x.slot];
    x.tickets = 0;
    x.next = s.holders;
    s.holders = i;
    s.handles += x.handles;
    s.pins += x.pins;
    s.ref_count += x.handles + x.pins + x.parked;
  }
  for (uint32_t i = 0; i < h.max_tickets; ++i) {
    auto& x = tickets[i];
    if (x.id == 0)
      continue;
    auto holder = t.find_or_add_holder_locked(x.slot, x.process);
    if (!holder) {
      x.id = 0;
      continue;
    }
    holders[*holder].tickets += 1;
    slots[x.slot].ref_count += 1;
  }
  for (uint32_t i = 0; i < h.max_holders; ++i)
    t.release_holder_if_empty_locked(i);
  // 3. Objects nobody references are freed (e.g. a create that died before
  //    its holder existed); the allocator is rebuilt below, so only the
  //    marker and spill file are handled here.
  h.bytes_spilled = 0;
  std::vector<std::pair<uint64_t, uint64_t>> used;
  for (uint32_t i = 0; i < h.max_objects; ++i) {
    auto& s = slots[i];
    if (s.id != 0 && s.ref_count == 0) {
      if (s.state == slot_state::spilled)
        ::unlink(t.spill_path(s.id).c_str());
      s.id = 0;
    }
    if (s.id == 0) {
      s.state = slot_state::free;
      s.block = npos64;
      continue;
    }
    // A restoring object has both its file and its new block (I/O of a
    // live process, or of a dead or unknown one that step 6 reverts).
    if (s.state == slot_state::spilled || s.state == slot_state::restoring)
      h.bytes_spilled += s.size;
    if (s.state != slot_state::spilled && s.block != npos64)
      used.emplace_back(s.block, s.block_size);
  }
  // 4. Free lists of slots and tickets.
  h.free_slot = npos32;
  for (uint32_t i = h.max_objects; i-- > 0;) {
    if (slots[i].id == 0) {
      slots[i].next_free = h.free_slot;
      h.free_slot = i;
    }
  }
  h.free_ticket = npos32;
  for (uint32_t i = h.max_tickets; i-- > 0;) {
    if (tickets[i].id == 0) {
      tickets[i].next_free = h.free_ticket;
      h.free_ticket = i;
    }
  }
  // 5. The allocator, from the blocks of resident objects.
  allocator{h.alloc, t.data}.rebuild(std::move(used));
  clean_spill_directory_locked(t);
  h.recoveries += 1;
  // 6. Spill I/O that names no attached process has nobody to finish it
  //    (left by a build that cleared `io_process` before the state change):
  //    roll it back before any count drops, so that freeing the object
  //    sees a settled state. Then the owner that died (and any other dead
  //    process) gives up its counts, rolling back its own I/O first.
  for (uint32_t i = 0; i < h.max_objects; ++i) {
    auto& s = slots[i];
    if (s.id != 0 &&
        (s.state == slot_state::spilling || s.state == slot_state::restoring) &&
        (s.io_process >= h.max_processes || procs[s.io_process].pid == 0))
      roll_back_io_locked(t, i);
  }
  for (uint32_t i = 0; i < h.max_processes; ++i)
    if (procs[i].pid != 0 && i != self &&
        !process_alive(procs[i].pid, procs[i].start_time))
      reap_process_locked(t, i);
}

} // namespace ferry::store::detail
