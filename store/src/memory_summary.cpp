#include "ferry/store/memory_summary.hpp"

#include <cstdio>
#include <string>

namespace ferry::store {

namespace {

std::string human(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char buf[32];
  if (unit == 0)
    std::snprintf(buf, sizeof(buf), "%llu B",
                  static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof(buf), "%.1f %s", value, units[unit]);
  return buf;
}

} // namespace

std::string to_string(const memory_summary& x) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line), "%-22s %14s %6s %-8s %-6s %-7s %s\n",
                "OBJECT ID", "SIZE", "REFS", "STATE", "PINNED", "SPILLED",
                "HOLDERS (pid: handles/in-transit/pins/parked)");
  out += line;
  for (auto& obj : x.objects) {
    std::string holders;
    for (auto& h : obj.holders) {
      if (!holders.empty())
        holders += ", ";
      holders += std::to_string(h.pid) + ": " + std::to_string(h.handles) +
                 "/" + std::to_string(h.in_transit) + "/" +
                 std::to_string(h.pins) + "/" + std::to_string(h.parked);
    }
    std::snprintf(line, sizeof(line), "%-22s %14llu %6llu %-8s %-6s %-7s %s\n",
                  to_string(obj.id).c_str(),
                  static_cast<unsigned long long>(obj.size),
                  static_cast<unsigned long long>(obj.ref_count),
                  obj.sealed ? "sealed" : "creating", obj.pinned ? "yes" : "no",
                  obj.spilled ? "yes" : "no", holders.c_str());
    out += line;
  }
  out += "--- store '" + x.name + "': " + std::to_string(x.objects.size()) +
         " objects\n";
  out += "capacity " + human(x.capacity) + ", used " + human(x.bytes_used) +
         ", pinned " + human(x.bytes_pinned) + ", largest free block " +
         human(x.largest_free_block) + "\n";
  out += "spilled " + human(x.bytes_spilled) + " of " + human(x.spill_limit) +
         " in " + x.spill_directory + ", lock recoveries " +
         std::to_string(x.recoveries) + "\n";
  out += "processes:";
  for (auto& p : x.processes) {
    out += ' ';
    out += std::to_string(p.pid);
    if (!p.alive)
      out += " (dead)";
  }
  out += "\n";
  return out;
}

} // namespace ferry::store
