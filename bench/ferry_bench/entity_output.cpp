// The entity program's output: its rows as JSON and as a table on stdout
// (output.hpp).
#include "output.hpp"

#include <iostream>
#include <string>

namespace ferry::bench {

void write_entity_json(std::ostream& out, const std::vector<entity_row>& rows) {
  bool first = true;
  for (auto& x : rows) {
    out << (first ? "\n" : ",\n") << "    {\"what\": \"" << x.what
        << "\", \"store\": \"" << x.store << "\"";
    if (!x.error.empty()) {
      out << ", \"error\": \"" << json_escape(x.error) << "\"}";
    } else {
      out << ", \"figure\": \"" << x.figure
          << "\", \"value\": " << json_number(x.value) << ", \"baseline\": ";
      if (x.baseline > 0)
        out << json_number(x.baseline);
      else
        out << "null";
      out << "}";
    }
    first = false;
  }
}

void print_entities(const std::vector<entity_row>& rows) {
  std::cout << "\nentities (in one process, linked over loopback TCP; "
               "baseline: a plain remote actor on the same member):\n";
  for (auto& x : rows) {
    std::cout << "  " << x.what << " " << x.store << ": ";
    if (!x.error.empty()) {
      std::cout << "not measured: " << x.error << "\n";
      continue;
    }
    std::cout << x.figure << " " << fixed(x.value, 1);
    if (x.baseline > 0)
      std::cout << " (plain actor " << fixed(x.baseline, 1) << ", ratio "
                << fixed(x.baseline / x.value, 2) << ")";
    std::cout << "\n";
  }
}

} // namespace ferry::bench
