// store_worker: the actors that call the entities' database.
//
// A state store's calls block their thread until the database answers
// (entities/state_store.hpp), so no actor on CAF's scheduler makes them:
// a node runs `store_connections` detached actors, each with a thread of
// its own, and its entity host and entities ask them (the host's
// `workers`, taken in turn):
//
//   load_atom, type, key  ->  family, bytes, version
//   save_atom, type, key, expected, family, bytes  ->  version
//   acquire_atom, shard, owner, ttl ms, grace ms  ->  lease_grant
//   renew_atom, owner, ttl ms  ->  the shards still held
//   release_atom, shard, owner, hand_to  ->  true
//
// Failures come back as the store's errors (`state_conflict`,
// `state_store_failed`, ...).
//
// Thread-safety: actors; the store is called from the workers' threads.
#pragma once

#include "entities/state_store.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/allowed_unsafe_message_type.hpp>

#include <memory>

namespace ferry::detail::entities {

/// Spawns a detached worker calling `store`.
caf::actor spawn_store_worker(caf::actor_system& sys,
                              std::shared_ptr<state_store> store);

} // namespace ferry::detail::entities

// A lease's answer stays within the node (a worker answers its host).
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ferry::detail::entities::lease_grant)
