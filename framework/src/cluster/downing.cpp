// downing: see cluster/downing.hpp.
#include "cluster/downing.hpp"

#include "ferry/errc.hpp"

#include <caf/error.hpp>

#include <string>

namespace ferry::detail::cluster {

caf::expected<downing_policy> parse_downing_policy(std::string_view name) {
  if (name == "none")
    return downing_policy::none;
  if (name == "keep-majority")
    return downing_policy::keep_majority;
  if (name == "keep-oldest")
    return downing_policy::keep_oldest;
  return caf::make_error(errc::invalid_config,
                         "ferry.cluster.downing is '" + std::string{name} +
                           "'; use none, keep-majority or keep-oldest");
}

const char* to_string(downing_policy x) {
  switch (x) {
  case downing_policy::none:
    return "none";
  case downing_policy::keep_majority:
    return "keep-majority";
  case downing_policy::keep_oldest:
    return "keep-oldest";
  }
  return "unknown";
}

downing_decision decide(downing_policy policy, const gossip& view,
                        uint64_t self) {
  downing_decision out;
  if (policy == downing_policy::none)
    return out;
  // The two sides as this node sees them: members it reaches (itself
  // included) and members some live observer holds unreachable.
  std::vector<const member*> here;
  std::vector<const member*> there;
  for (auto& m : view.members) {
    if (m.state >= member_state::exiting)
      continue;
    if (m.uid != self && view.unreachable(m.uid))
      there.push_back(&m);
    else
      here.push_back(&m);
  }
  if (there.empty())
    return out;
  bool keep_here = false;
  if (policy == downing_policy::keep_majority) {
    if (here.size() != there.size()) {
      keep_here = here.size() > there.size();
    } else {
      // Members are sorted by address: the first of either side is that
      // side's lowest.
      keep_here = !here.empty() && member_less(*here.front(), *there.front());
    }
  } else {
    auto older = [](const member* x, const member* y) {
      if (x == nullptr)
        return false;
      if (y == nullptr)
        return true;
      auto xn = x->up_number == 0 ? UINT64_MAX : x->up_number;
      auto yn = y->up_number == 0 ? UINT64_MAX : y->up_number;
      return xn != yn ? xn < yn : member_less(*x, *y);
    };
    const member* oldest_here = nullptr;
    for (auto* m : here)
      if (older(m, oldest_here))
        oldest_here = m;
    const member* oldest_there = nullptr;
    for (auto* m : there)
      if (older(m, oldest_there))
        oldest_there = m;
    keep_here = older(oldest_here, oldest_there);
  }
  if (keep_here) {
    for (auto* m : there)
      out.down.push_back(m->uid);
  } else {
    out.down_self = true;
  }
  return out;
}

} // namespace ferry::detail::cluster
