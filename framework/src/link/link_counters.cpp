// link_counters' refusal reasons and family_counters: messages and times
// per family (see link/link_counters.hpp).
#include "link/link_counters.hpp"

#include "ferry/errc.hpp"

#include <caf/atom.hpp>

namespace ferry::detail {

// -- link_counters ------------------------------------------------------------

void link_counters::count_refusal(const caf::error& reason) {
  ++refusals;
  auto slot = reason_slots - 1; // any other error
  if (reason.category() == caf::atom("ferry_fw") &&
      reason.code() < reason_slots - 1)
    slot = reason.code();
  refusals_by_reason_[slot].fetch_add(1, std::memory_order_relaxed);
}

std::map<std::string, uint64_t> link_counters::refusal_reasons() const {
  std::map<std::string, uint64_t> result;
  for (size_t i = 0; i < reason_slots; ++i)
    if (auto n = refusals_by_reason_[i].load(std::memory_order_relaxed); n > 0)
      result.emplace(i == reason_slots - 1 ? std::string{"other"}
                                           : to_string(static_cast<errc>(i)),
                     n);
  return result;
}

// -- family_counters ----------------------------------------------------------

family_counters::family_counters(std::vector<std::string> names)
  : names_(std::move(names)),
    counts_(std::make_unique<std::atomic<uint64_t>[]>(names_.size())),
    times_(std::make_unique<histogram[]>(names_.size())) {
  // nop
}

size_t family_counters::index_of(std::string_view family) const {
  size_t i = 0;
  while (i < names_.size() && names_[i] != family)
    ++i;
  return i;
}

void family_counters::count(std::string_view family) {
  if (auto i = index_of(family); i < names_.size())
    counts_[i].fetch_add(1, std::memory_order_relaxed);
}

void family_counters::time(std::string_view family, uint64_t nanos) {
  if (auto i = index_of(family); i < names_.size())
    times_[i].observe(nanos);
}

std::map<std::string, uint64_t> family_counters::snapshot() const {
  std::map<std::string, uint64_t> result;
  for (size_t i = 0; i < names_.size(); ++i)
    if (auto n = counts_[i].load(std::memory_order_relaxed); n > 0)
      result.emplace(names_[i], n);
  return result;
}

std::map<std::string, histogram_stats> family_counters::times() const {
  std::map<std::string, histogram_stats> result;
  for (size_t i = 0; i < names_.size(); ++i)
    if (!times_[i].empty())
      result.emplace(names_[i], times_[i].snapshot());
  return result;
}

} // namespace ferry::detail
