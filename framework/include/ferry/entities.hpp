// The sharded entities a node reaches and hosts, as its program sees them.
//
// `node::entities()` returns this face. `ref(type, key)` gives a handle of
// the entity named (type, key): an ordinary `caf::actor` to send and request
// through, whichever member holds the entity's shard, while members come and
// go (docs/entities.md). A node whose config registers entity types
// (`node_config::add_entity_type`, ferry/entity.hpp) also hosts entities:
// it holds shards and runs their activations.
//
// Usage:
//
//     auto cart = n->entities().ref("cart", "user-42");   // expected<actor>
//     self->request(*cart, 5s, add_item{"tea"}).receive(...);
//
// Thread-safety: every member function may be called from any thread.
#pragma once

#include "ferry/entities_config.hpp"

#include <caf/actor.hpp>
#include <caf/expected.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace ferry {

class node;
class node_config;
class cluster;

namespace detail {
class member_host;
} // namespace detail

/// What a node's entities do (`entities::stats`).
struct entity_stats {
  /// Active entities on this node, per type.
  std::map<std::string, uint64_t> active;
  /// Shards this node holds.
  uint64_t shards_held = 0;
  /// Activations started, passivations finished, hand-offs made.
  uint64_t activations = 0;
  uint64_t passivations = 0;
  uint64_t hand_offs = 0;
  /// Messages waiting for a shard that moves.
  uint64_t buffered = 0;
  /// Messages refused (unknown type, bad key, full buffer).
  uint64_t refused = 0;
  /// Saves committed, and saves refused for a stale version.
  uint64_t saves = 0;
  uint64_t conflicts = 0;
  /// Calls of the database (loads, saves, leases), those that failed
  /// otherwise, and the seconds they took together.
  uint64_t store_calls = 0;
  uint64_t store_failures = 0;
  double store_seconds = 0;
};

class entities {
public:
  ~entities();

  entities(const entities&) = delete;
  entities& operator=(const entities&) = delete;

  /// Returns whether this node hosts entities (it registered entity
  /// types).
  bool hosting() const;

  /// Returns a handle of entity (`type`, `key`). Fails with
  /// `errc::invalid_entity_key` for an empty key or one longer than
  /// `ferry.entities.max-key-bytes`. A type no member registered is refused
  /// when a message reaches the member holding the shard
  /// (`errc::unknown_entity_type`, as the answer to a request).
  [[nodiscard]] caf::expected<caf::actor> ref(const std::string& type,
                                              const std::string& key);

  /// Returns what this node's entities do now.
  entity_stats stats() const;

  struct impl;

private:
  friend class node;

  /// Starts the entities of the node `host` (its cluster `c`, its config
  /// `cfg`). Fails with `invalid_config` on a bad `ferry.entities` setting.
  static caf::expected<std::unique_ptr<entities>>
  start(detail::member_host& host, ferry::cluster& c, node_config& cfg);

  explicit entities(std::unique_ptr<impl> x);

  std::unique_ptr<impl> impl_;
};

} // namespace ferry
