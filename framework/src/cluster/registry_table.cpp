// registry_table: see cluster/registry_table.hpp.
#include "cluster/registry_table.hpp"

#include <algorithm>

namespace ferry::detail::cluster {

uint64_t registry_table::add_local(const std::string& key,
                                   const caf::actor& who) {
  if (!who)
    return 0;
  for (auto& [id, e] : local_)
    if (e.key == key && e.who == who)
      return 0;
  auto id = next_id_++;
  local_.emplace(id, entry{key, who});
  return id;
}

std::vector<std::pair<uint64_t, std::string>>
registry_table::remove_local(const caf::actor_addr& who) {
  std::vector<std::pair<uint64_t, std::string>> gone;
  for (auto i = local_.begin(); i != local_.end();) {
    if (i->second.who.address() == who) {
      gone.emplace_back(i->first, i->second.key);
      i = local_.erase(i);
    } else {
      ++i;
    }
  }
  return gone;
}

std::string registry_table::apply(uint64_t from, uint64_t id,
                                  const std::string& key, const caf::actor& who,
                                  bool present) {
  auto& theirs = remote_[from];
  if (present) {
    if (!who)
      return {};
    auto [i, fresh] = theirs.try_emplace(id, entry{key, who});
    if (fresh)
      return key;
    // Told again after the link to `from` came back: the handle is a new
    // proxy (the one before ended with the old link), and replaces it.
    if (i->second.who == who)
      return {};
    i->second.who = who;
    return i->second.key;
  }
  auto i = theirs.find(id);
  if (i == theirs.end())
    return {};
  auto changed = i->second.key;
  theirs.erase(i);
  if (theirs.empty())
    remote_.erase(from);
  return changed;
}

std::vector<std::string> registry_table::drop_member(uint64_t from) {
  std::vector<std::string> keys;
  auto i = remote_.find(from);
  if (i == remote_.end())
    return keys;
  for (auto& [id, e] : i->second)
    if (std::find(keys.begin(), keys.end(), e.key) == keys.end())
      keys.push_back(e.key);
  remote_.erase(i);
  return keys;
}

std::vector<caf::actor> registry_table::find(const std::string& key) const {
  std::vector<caf::actor> out;
  auto add = [&](const entries& xs) {
    for (auto& [id, e] : xs)
      if (e.key == key && std::find(out.begin(), out.end(), e.who) == out.end())
        out.push_back(e.who);
  };
  add(local_);
  for (auto& [from, xs] : remote_)
    add(xs);
  return out;
}

} // namespace ferry::detail::cluster
