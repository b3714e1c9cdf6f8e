// Operations on the object, holder and ticket tables; see object_tables.hpp.
#include "object_tables.hpp"

#include "allocator.hpp"
#include "fail.hpp"
#include "spill_file.hpp"

#include <unistd.h>

#include <utility>

namespace ferry::store::detail {

object_tables::object_tables(segment_header* header, std::byte* base,
                             std::string name)
  : hdr(header),
    procs(reinterpret_cast<process_entry*>(base + header->process_offset)),
    slots(reinterpret_cast<slot_entry*>(base + header->slot_offset)),
    holders(reinterpret_cast<holder_entry*>(base + header->holder_offset)),
    tickets(reinterpret_cast<ticket_entry*>(base + header->ticket_offset)),
    data(base + header->data_offset),
    name(std::move(name)) {
  // nop
}

slot_entry* object_tables::lookup_locked(object_id id) noexcept {
  auto value = static_cast<uint64_t>(id);
  if (value == 0)
    return nullptr;
  auto slot = value & ((uint64_t{1} << hdr->slot_bits) - 1);
  if (slot >= hdr->max_objects || slots[slot].id != value)
    return nullptr;
  return &slots[slot];
}

uint32_t object_tables::find_holder_locked(uint32_t slot,
                                           uint32_t process) noexcept {
  for (auto i = slots[slot].holders; i != npos32; i = holders[i].next)
    if (holders[i].process == process)
      return i;
  return npos32;
}

caf::expected<uint32_t>
object_tables::find_or_add_holder_locked(uint32_t slot, uint32_t process) {
  if (auto i = find_holder_locked(slot, process); i != npos32)
    return i;
  auto i = hdr->free_holder;
  if (i == npos32)
    return fail(errc::table_full, "store '", name, "': all ", hdr->max_holders,
                " holder entries are taken; drop handles or create the store "
                "with larger max_objects / max_tickets");
  auto& h = holders[i];
  hdr->free_holder = h.next;
  h.process = process;
  h.handles = 0;
  h.tickets = 0;
  h.pins = 0;
  h.parked = 0;
  h.next = slots[slot].holders;
  commit();
  h.slot = slot;
  slots[slot].holders = i;
  return i;
}

caf::expected<uint32_t> object_tables::holder_of_live_locked(uint32_t slot,
                                                             object_id id,
                                                             uint32_t process) {
  if (slots[slot].id != static_cast<uint64_t>(id))
    return fail(errc::object_not_found, describe(id), " no longer exists");
  return find_or_add_holder_locked(slot, process);
}

void object_tables::release_holder_if_empty_locked(uint32_t index) noexcept {
  auto& h = holders[index];
  if (h.slot == npos32 || h.handles != 0 || h.tickets != 0 || h.pins != 0 ||
      h.parked != 0)
    return;
  auto slot = h.slot;
  h.slot = npos32;
  commit();
  auto* link = &slots[slot].holders;
  while (*link != npos32 && *link != index)
    link = &holders[*link].next;
  if (*link == index)
    *link = h.next;
  h.next = hdr->free_holder;
  hdr->free_holder = index;
}

void object_tables::drop_handle_locked(uint32_t slot,
                                       uint32_t holder) noexcept {
  auto& h = holders[holder];
  auto& s = slots[slot];
  if (h.slot != slot || h.handles == 0)
    return; // cannot happen while the handle lives; never underflow
  h.handles -= 1;
  s.handles -= 1;
  s.ref_count -= 1;
  release_holder_if_empty_locked(holder);
  free_object_if_unreferenced_locked(slot);
}

void object_tables::free_object_locked(uint32_t slot) noexcept {
  auto& s = slots[slot];
  auto id = s.id;
  auto state = s.state;
  s.id = 0;
  commit();
  if (s.block != npos64 && state != slot_state::spilled)
    allocator{hdr->alloc, data}.deallocate(s.block);
  // A restoring object has both its new block and its file (counted in
  // bytes_spilled until the restore completes).
  if (state == slot_state::spilled || state == slot_state::restoring) {
    ::unlink(spill_path(id).c_str());
    hdr->bytes_spilled -= s.size;
  }
  s.block = npos64;
  s.state = slot_state::free;
  s.io_process = npos32;
  s.holders = npos32;
  s.ref_count = 0;
  s.handles = 0;
  s.pins = 0;
  s.next_free = hdr->free_slot;
  hdr->free_slot = slot;
}

void object_tables::free_object_if_unreferenced_locked(uint32_t slot) noexcept {
  if (slots[slot].id != 0 && slots[slot].ref_count == 0)
    free_object_locked(slot);
}

uint64_t object_tables::bytes_pinned_locked() const noexcept {
  uint64_t result = 0;
  for (uint32_t i = 0; i < hdr->max_objects; ++i) {
    auto& s = slots[i];
    if (s.id != 0 && s.state != slot_state::spilled && s.block != npos64 &&
        (s.state == slot_state::creating || s.handles > 0))
      result += s.block_size;
  }
  return result;
}

uint32_t object_tables::find_ticket_locked(
  const transfer_ticket& ticket) const noexcept {
  auto index = ticket.id & ((uint64_t{1} << hdr->ticket_bits) - 1);
  if (ticket.id != 0 && index < hdr->max_tickets &&
      tickets[index].id == ticket.id &&
      tickets[index].object == static_cast<uint64_t>(ticket.object))
    return static_cast<uint32_t>(index);
  return npos32;
}

uint32_t object_tables::retire_ticket_locked(uint32_t index) noexcept {
  auto& t = tickets[index];
  auto slot = t.slot;
  auto exporter = t.process;
  t.id = 0;
  commit();
  t.next_free = hdr->free_ticket;
  hdr->free_ticket = index;
  slots[slot].ref_count -= 1;
  if (auto from = find_holder_locked(slot, exporter); from != npos32) {
    if (holders[from].tickets > 0)
      holders[from].tickets -= 1;
    release_holder_if_empty_locked(from);
  }
  return slot;
}

std::string object_tables::spill_path(uint64_t id) const {
  return spill_file_path(std::string{hdr->spill_directory}, name, id);
}

std::string object_tables::describe(object_id id) const {
  return "object " + to_string(id) + " of store '" + name + "'";
}

} // namespace ferry::store::detail
