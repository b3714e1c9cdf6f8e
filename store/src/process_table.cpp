// Registering and reaping processes; see process_table.hpp.
#include "process_table.hpp"

#include "fail.hpp"
#include "guard.hpp"
#include "spill.hpp"

#include <set>
#include <utility>
#include <vector>

namespace ferry::store::detail {

caf::expected<uint32_t> register_process(object_tables& t,
                                         const process_identity& self) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    {
      guard g{t, npos32};
      if (!g.ok())
        return g.error();
      if (t.hdr->retired != 0)
        return npos32;
      // A stale entry with our pid belongs to a dead process whose pid was
      // reused: reap it now.
      for (uint32_t i = 0; i < t.hdr->max_processes; ++i)
        if (t.procs[i].pid == self.pid &&
            t.procs[i].start_time != self.start_time)
          reap_process_locked(t, i);
      for (uint32_t i = 0; i < t.hdr->max_processes; ++i) {
        if (t.procs[i].pid == 0) {
          t.procs[i].start_time = self.start_time;
          commit();
          t.procs[i].pid = self.pid;
          return i;
        }
      }
    }
    if (auto reaped = reap_dead_processes(t, npos32); !reaped)
      return std::move(reaped.error());
  }
  return fail(errc::table_full, "store '", t.name, "': all ",
              t.hdr->max_processes,
              " process entries are taken by live processes; detach some or "
              "create the store with a larger max_processes");
}

void reap_process_locked(object_tables& t, uint32_t process) noexcept {
  auto* hdr = t.hdr;
  // Spill I/O the process left half done (or finished, if it died before
  // clearing `io_process`): settle it before its handles go.
  for (uint32_t i = 0; i < hdr->max_objects; ++i)
    if (t.slots[i].id != 0 && t.slots[i].io_process == process)
      roll_back_io_locked(t, i);
  std::set<uint32_t> touched;
  for (uint32_t i = 0; i < hdr->max_tickets; ++i) {
    auto& x = t.tickets[i];
    if (x.id == 0 || x.process != process)
      continue;
    x.id = 0;
    commit();
    x.next_free = hdr->free_ticket;
    hdr->free_ticket = i;
    t.slots[x.slot].ref_count -= 1;
    touched.insert(x.slot);
  }
  for (uint32_t i = 0; i < hdr->max_holders; ++i) {
    auto& h = t.holders[i];
    if (h.slot == npos32 || h.process != process)
      continue;
    auto& s = t.slots[h.slot];
    s.handles -= h.handles;
    s.pins -= h.pins;
    s.ref_count -= h.handles + h.pins + h.parked;
    touched.insert(h.slot);
    h.handles = 0;
    h.tickets = 0;
    h.pins = 0;
    h.parked = 0;
    t.release_holder_if_empty_locked(i);
  }
  for (auto slot : touched)
    t.free_object_if_unreferenced_locked(slot);
  t.procs[process].pid = 0;
  t.procs[process].start_time = 0;
}

caf::expected<size_t> reap_dead_processes(object_tables& t, uint32_t self) {
  struct candidate {
    uint32_t index;
    int32_t pid;
    uint64_t start_time;
  };
  std::vector<candidate> candidates;
  {
    guard g{t, self};
    if (!g.ok())
      return g.error();
    for (uint32_t i = 0; i < t.hdr->max_processes; ++i)
      if (t.procs[i].pid != 0 && i != self)
        candidates.push_back({i, t.procs[i].pid, t.procs[i].start_time});
  }
  // Check liveness without the lock (it reads /proc).
  std::erase_if(candidates, [](const candidate& x) {
    return process_alive(x.pid, x.start_time);
  });
  if (candidates.empty())
    return size_t{0};
  guard g{t, self};
  if (!g.ok())
    return g.error();
  size_t reaped = 0;
  for (auto& x : candidates) {
    auto& p = t.procs[x.index];
    if (p.pid == x.pid && p.start_time == x.start_time) {
      reap_process_locked(t, x.index);
      ++reaped;
    }
  }
  return reaped;
}

} // namespace ferry::store::detail
