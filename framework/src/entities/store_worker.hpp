// store_worker: the actors that call the entities' database.
//
// A state store's calls block their thread until the database answers
// (entities/state_store.hpp), so no actor on CAF's scheduler makes them:
// a node runs `store_connections` detached actors, each with a thread of
// its own, that its entities ask to load and save (the host's `workers`,
// taken in turn), and one more that takes the host's lease calls alone (a
// renewal must not wait behind a queue of saves past its lease):
//
//   load_atom, type, key  ->  family, bytes, version
//   save_atom, type, key, expected, family, bytes  ->  version
//   acquire_atom, shard, owner, ttl ms, grace ms  ->  lease_grant
//   renew_atom, owner, ttl ms  ->  the shards still held
//   release_atom, shard, owner, hand_to  ->  true
//
// Failures come back as the store's errors (`state_conflict`,
// `state_store_failed`, ...). The workers count their calls in a
// `store_figures` they share (the metrics endpoint shows them).
//
// Thread-safety: actors; the store is called from the workers' threads.
#pragma once

#include "entities/state_store.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/allowed_unsafe_message_type.hpp>

#include <atomic>
#include <cstdint>
#include <memory>

namespace ferry::detail::entities {

/// What a node's store workers did, counted as they do it.
struct store_figures {
  /// Saves committed, and saves refused for a stale version.
  std::atomic<uint64_t> saves{0};
  std::atomic<uint64_t> conflicts{0};
  /// Calls of any kind that failed otherwise (the database's errors).
  std::atomic<uint64_t> failures{0};
  /// Calls of any kind, and the nanoseconds they took together.
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> call_nanoseconds{0};
};

/// Spawns a detached worker calling `store`, counting in `figures`.
caf::actor spawn_store_worker(caf::actor_system& sys,
                              std::shared_ptr<state_store> store,
                              std::shared_ptr<store_figures> figures);

} // namespace ferry::detail::entities

// A lease's answer stays within the node (a worker answers its host).
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ferry::detail::entities::lease_grant)
