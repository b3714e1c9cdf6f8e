#include "ferry/serializers/diagnostics.hpp"

namespace ferry::serializers {

std::string serializability_report::to_string() const {
  std::string result = type + ":\n";
  for (auto& f : encodable_by)
    result += "  " + f + ": ok\n";
  for (auto& [f, why] : blocked)
    result += "  " + f + ": blocked: " + why + "\n";
  for (auto& m : members) {
    if (m.blocked.empty())
      continue;
    result += "  member #" + std::to_string(m.index) + " (" + m.type + ")\n";
    for (auto& [f, why] : m.blocked)
      result += "    blocks " + f + ": " + why + "\n";
  }
  return result;
}

} // namespace ferry::serializers
