// entities_config: how a node hosts sharded entities (`ferry.entities.*`).
//
// A node that registers entity types (`node_config::add_entity_type`,
// ferry/entity.hpp) hosts them: each key maps to one of `shards` shards by a
// stable hash, each shard to one member of the cluster, and an entity is
// activated on the member holding its key's shard when a message comes,
// passivated after `passivate_after` without one. A member holds a shard
// through a lease in `store`, the database that also keeps the entities'
// state, so that at most one member holds it at a time (docs/entities.md).
// Every member must use the same `store` and `shards`.
//
// A config file sets the fields under `[ferry.entities]`, flags as
// `--ferry.entities.store=...`.
//
// Thread-safety: a value type.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ferry {

struct entities_config {
  /// Where entities keep their state and their shards' leases:
  /// "sqlite:PATH" (every member on one host) or "postgresql:CONNINFO"
  /// (libpq's keyword/value form or a postgresql:// URI). Required when the
  /// node registers entity types.
  std::string store;
  /// How many shards keys map to (the same on every member; changing it
  /// moves keys between shards). About ten per member the cluster may have.
  uint32_t shards = 100;
  /// An entity without a message for this long is passivated: its state is
  /// saved and its actor stops; the next message activates it again.
  std::chrono::milliseconds passivate_after{120000};
  /// How long a member's lease on a shard lasts unless renewed (it renews
  /// every third of it). A member that cannot renew stops the shard's
  /// entities before the lease runs out; another takes the shard once it
  /// has. At most `ferry.cluster.stable-after`, so that a downed member's
  /// shards move within it.
  std::chrono::milliseconds lease{10000};
  /// How long a hand-off may take: the member handing a shard off waits this
  /// long at most for its entities to save and stop, and the member taking
  /// it waits this long at most for the hand-off's buffered messages.
  std::chrono::milliseconds hand_off_timeout{10000};
  /// Most messages a member buffers for one shard while it is not active
  /// there (moving, or its lease being taken); one more is answered with
  /// `errc::entity_unavailable`.
  uint64_t max_buffered = 10000;
  /// Most shards a member hands off at once when members join.
  uint32_t max_moves = 4;
  /// Longest key, in bytes (at most 1024).
  uint64_t max_key_bytes = 256;
  /// Database connections (and threads calling the database) per node.
  uint32_t store_connections = 4;
};

} // namespace ferry
