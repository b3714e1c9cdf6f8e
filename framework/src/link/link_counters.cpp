// family_counters: messages per family (see link/link_counters.hpp).
#include "link/link_counters.hpp"

namespace ferry::detail {

family_counters::family_counters(std::vector<std::string> names)
  : names_(std::move(names)),
    counts_(std::make_unique<std::atomic<uint64_t>[]>(names_.size())) {
  // nop
}

void family_counters::count(std::string_view family) {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == family) {
      counts_[i].fetch_add(1, std::memory_order_relaxed);
      return;
    }
}

std::map<std::string, uint64_t> family_counters::snapshot() const {
  std::map<std::string, uint64_t> result;
  for (size_t i = 0; i < names_.size(); ++i)
    if (auto n = counts_[i].load(std::memory_order_relaxed); n > 0)
      result.emplace(names_[i], n);
  return result;
}

} // namespace ferry::detail
