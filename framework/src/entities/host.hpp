// host: the actor that runs a node's entities and holds its shards.
//
// Every member that hosts entities runs one host. It watches the cluster's
// members, computes which member owns each shard (entities/shard_map.hpp)
// and publishes that to the node's router (entities/router.hpp), and it
// holds the shards this member owns:
//
// - A shard it owns but does not hold yet it takes through a lease in the
//   state store (`acquire`); when the member before it handed it off, it
//   first waits for that member's `handoff` (what that member held for the
//   shard arrives before it), at most `hand_off_timeout`.
// - While it holds a shard, it renews the lease every third of `lease`; a
//   shard whose lease it could not renew in time (the database is away, or
//   another member took it) it stops at once, killing its entities, before
//   another member can take it.
// - A shard another member owns now (one joined, or this one leaves) it
//   hands off, `max_moves` at a time: it stops the shard's entities (each
//   saves what changed), passes on what it held for the shard, sends
//   `handoff`, and releases the lease to that member.
//
// A call for an entity of a held shard activates the entity if needed
// (entity_base loads its state) and goes to its mailbox with the caller's
// sender and message id; calls for a shard not held yet wait in the shard's
// buffer (up to `max_buffered`), and calls for another member's shard pass
// on to that member's host. An entity idle for `passivate_after` is
// stopped; calls that come while it stops wait and start its next
// activation. A `flush` that reaches the holder's delivery is answered with
// `ready` to the member that sent it (the router's ordering).
//
// Hosts find each other in the cluster registry (`registry_key`) and
// introduce themselves by incarnation and whether they host entities; the
// owners are the members that are up and host them. A node that hosts none
// (an observer: a client of the entities) only routes its own calls. A node
// that joins no cluster owns every shard.
//
// Thread-safety: an actor.
#pragma once

#include "clock.hpp"
#include "entities/router.hpp"

#include "ferry/cluster.hpp"
#include "ferry/entities.hpp"
#include "ferry/entities_config.hpp"
#include "ferry/entity.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ferry::detail::entities {

/// What a host needs.
struct host_settings {
  entities_config cfg;
  std::string node_name;
  uint64_t uid = 0;
  const serializers::registry* registry = nullptr;
  /// The entity types this node runs, by name.
  std::map<std::string, std::shared_ptr<const entity_type>> types;
  /// The store workers (entities/store_worker.hpp) that load and save.
  std::vector<caf::actor> workers;
  /// The store worker that takes the lease calls alone, so that a queue of
  /// loads and saves never holds a renewal back past its lease.
  caf::actor lease_worker;
  std::shared_ptr<router> routes;
  /// The node's cluster (one that joins none owns every shard).
  ferry::cluster* cluster = nullptr;
  const clock* time = &clock::steady();
  std::function<void(const std::string&)> log;
  /// The node hosts no entities: it only routes its own calls (holds no
  /// shard, is no owner).
  bool observer = false;
};

/// Spawns the host (it starts watching the cluster at once).
caf::actor spawn_host(caf::actor_system& sys, host_settings s);

} // namespace ferry::detail::entities

// What a host reports (`stats_atom`): its part of the node's figures (the
// store workers count the rest).
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ferry::entity_stats)
