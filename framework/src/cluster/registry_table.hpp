// registry_table: the cluster registry as one node holds it.
//
// Actors are registered under keys on the node they live on (local
// entries, numbered by that node). Each node tells every other member's
// daemon of its local entries as they come and go (by number), and gives a
// member it newly reaches all of them at once; the others keep what they
// heard per member (remote entries); a member tells them all again when its
// link comes back, with handles that work over the new link. An entry
// leaves with its actor (the owning node sees it end and tells the others),
// or with its node's removal or down (every node drops that member's
// entries). `find` is the union of
// the local entries and the remote ones: eventually the same on every node.
//
// Thread-safety: none; the cluster daemon owns it.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ferry::detail::cluster {

class registry_table {
public:
  /// One actor under one key.
  struct entry {
    std::string key;
    caf::actor who;
  };

  /// Entries by the number their node gave them.
  using entries = std::map<uint64_t, entry>;

  /// Adds `who` under `key` on this node. Returns the entry's number, or 0
  /// when it was there already (or `who` is invalid).
  uint64_t add_local(const std::string& key, const caf::actor& who);

  /// Removes every local entry of `who`. Returns their numbers and keys.
  std::vector<std::pair<uint64_t, std::string>>
  remove_local(const caf::actor_addr& who);

  /// Applies what member `from` said of its entry number `id`: present
  /// under `key` as `who`, or gone. An entry told again with another handle
  /// (a new proxy, its link to `from` having come back) takes that handle.
  /// Returns the key whose set changed, or an empty string.
  std::string apply(uint64_t from, uint64_t id, const std::string& key,
                    const caf::actor& who, bool present);

  /// Drops every entry of member `from`. Returns the keys that changed.
  std::vector<std::string> drop_member(uint64_t from);

  /// Returns the actors under `key`, this node's first.
  std::vector<caf::actor> find(const std::string& key) const;

  /// Returns this node's own entries.
  const entries& local() const noexcept { return local_; }

private:
  uint64_t next_id_ = 1;
  entries local_;
  std::map<uint64_t, entries> remote_;
};

} // namespace ferry::detail::cluster
