// Taking a store's memory summary and totals; see summary.hpp.
#include "summary.hpp"

#include "allocator.hpp"
#include "guard.hpp"
#include "process_identity.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace ferry::store::detail {

namespace {

/// Copies the store-wide figures both a summary and the totals carry
/// (fields of the same names). Requires the store lock.
template <class Figures>
void read_figures_locked(const object_tables& t, Figures& out) {
  auto* hdr = t.hdr;
  out.capacity = hdr->alloc.capacity;
  out.bytes_used = hdr->alloc.used;
  out.bytes_pinned = t.bytes_pinned_locked();
  out.bytes_spilled = hdr->bytes_spilled;
  out.spill_limit = hdr->spill_limit;
  out.largest_free_block = allocator{hdr->alloc, t.data}.largest_free_payload();
  out.recoveries = hdr->recoveries;
}

/// Appends (pid, start time) of every attached process, whose liveness is
/// read from /proc once the lock is released. Requires the store lock.
void read_processes_locked(const object_tables& t,
                           std::vector<std::pair<int32_t, uint64_t>>& out) {
  for (uint32_t i = 0; i < t.hdr->max_processes; ++i)
    if (t.procs[i].pid != 0)
      out.emplace_back(t.procs[i].pid, t.procs[i].start_time);
}

} // namespace

caf::expected<memory_summary> summarize(object_tables& t, uint32_t self) {
  memory_summary result;
  std::vector<std::pair<int32_t, uint64_t>> starts;
  {
    guard g{t, self};
    if (!g.ok())
      return g.error();
    auto* hdr = t.hdr;
    result.name = t.name;
    read_figures_locked(t, result);
    result.spill_directory.assign(hdr->spill_directory,
                                  ::strnlen(hdr->spill_directory, max_path));
    for (uint32_t i = 0; i < hdr->max_objects; ++i) {
      auto& s = t.slots[i];
      if (s.id == 0)
        continue;
      object_info info;
      info.id = object_id{s.id};
      info.size = s.size;
      info.ref_count = s.ref_count;
      info.sealed = s.state != slot_state::creating;
      info.pinned = s.pins > 0;
      info.spilled =
        s.state == slot_state::spilled || s.state == slot_state::restoring;
      for (auto j = s.holders; j != npos32; j = t.holders[j].next) {
        auto& x = t.holders[j];
        info.holders.push_back(
          {t.procs[x.process].pid, x.handles, x.tickets, x.pins, x.parked});
      }
      std::sort(info.holders.begin(), info.holders.end(),
                [](auto& a, auto& b) { return a.pid < b.pid; });
      result.objects.push_back(std::move(info));
    }
    read_processes_locked(t, starts);
  }
  std::sort(result.objects.begin(), result.objects.end(),
            [](auto& a, auto& b) { return a.id < b.id; });
  // Liveness reads /proc: done without the lock.
  for (auto [pid, start] : starts)
    result.processes.push_back({pid, process_alive(pid, start)});
  return result;
}

caf::expected<store_totals> totals(object_tables& t, uint32_t self) {
  store_totals result;
  result.name = t.name;
  // At most the process table's size; reserved before the lock is taken.
  std::vector<std::pair<int32_t, uint64_t>> starts;
  starts.reserve(t.hdr->max_processes);
  {
    guard g{t, self};
    if (!g.ok())
      return g.error();
    read_figures_locked(t, result);
    for (uint32_t i = 0; i < t.hdr->max_objects; ++i)
      result.objects += t.slots[i].id != 0 ? 1 : 0;
    read_processes_locked(t, starts);
  }
  result.processes = starts.size();
  // Liveness reads /proc: done without the lock.
  for (auto [pid, start] : starts)
    result.processes_alive += process_alive(pid, start) ? 1 : 0;
  return result;
}

} // namespace ferry::store::detail
