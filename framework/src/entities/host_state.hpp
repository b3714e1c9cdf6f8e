// host_state: what an entity host keeps (see entities/host.hpp), and the
// functions its two files share: host.cpp (calls, entities, members) and
// host_shards.cpp (leases and hand-offs).
//
// Thread-safety: the state of one actor, used by its handlers only.
#pragma once

#include "entities/host.hpp"
#include "entities/lease_fence.hpp"
#include "entities/protocol.hpp"
#include "entities/store_worker.hpp"
#include "log_limiter.hpp"

#include <caf/stateful_actor.hpp>

#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ferry::detail::entities {

/// One message for a shard as it arrived: a call (call_prefix elements,
/// then the user's) or a flush.
struct item {
  caf::strong_actor_ptr sender;
  caf::message_id mid;
  caf::message content;
};

/// One activation this host runs.
struct running_entity {
  caf::actor actor;
  const std::string* type = nullptr;
  std::string key;
  /// When its last call came (the host's clock).
  clock::time_point last;
  /// It was told to stop: calls for it wait in `waiting` for the next
  /// activation.
  bool stopping = false;
  std::deque<item> waiting;
};

/// Where a shard stands on this member.
enum class shard_phase : uint8_t {
  /// Not held: calls wait (this member owns it) or pass on (another does).
  idle,
  /// A lease is being asked for.
  acquiring,
  /// Held, waiting for the hand-off of the member that held it before.
  awaiting_handoff,
  /// Held: calls go to the entities.
  active,
  /// Held, its entities stopping: calls wait to go to `hand_to`.
  handing_off,
};

struct shard_state {
  shard_phase phase = shard_phase::idle;
  uint64_t epoch = 0;
  /// A lease call is under way.
  bool busy = false;
  /// No lease before this (a refused acquire waits).
  clock::time_point retry_at;
  /// Until when this member may run the shard (the lease's end as seen
  /// from when its call left, less the margin; the host's clock), shared
  /// with the shard's activations: set while the shard is held, a new one
  /// each time it is taken.
  std::shared_ptr<lease_fence> fence;
  /// When the lease call that took the shard left: a renewal that left
  /// before it does not know of the shard.
  clock::time_point taken_at;
  /// When the phase began (hand-offs time out).
  clock::time_point since;
  /// A hand-off to this member began (its calls are held here, and its
  /// lease taken, whoever owns it in this member's view).
  bool incoming = false;
  /// The hand-off's end came.
  bool handoff_seen = false;
  /// Why the last lease call failed (none after one succeeded): calls for
  /// the shard hear it until `retry_at`.
  caf::error failure;
  /// The member a hand-off goes to.
  uint64_t hand_to = 0;
  /// Calls and flushes waiting, in arrival order.
  std::deque<item> buffer;
  /// By `entity_id(type, key)`.
  std::unordered_map<std::string, running_entity> entities;

  /// Returns whether the lease may have run out (always, while not held).
  bool lease_passed() const { return !fence || fence->passed(); }

  /// Ends the hold's fence: activations still running refuse what comes.
  void end_hold() {
    if (fence) {
      fence->close();
      fence.reset();
    }
  }
};

/// Returns the name of entity (type, key) in a shard's table.
inline std::string entity_id(const std::string& type, const std::string& key) {
  std::string result;
  result.reserve(type.size() + 1 + key.size());
  result += type;
  result += '\0';
  result += key;
  return result;
}

struct host_state {
  host_settings s;
  /// Lease owner name of this member.
  std::string owner;
  caf::actor self_handle;
  std::vector<shard_state> shards;
  /// The members as the cluster shows them, by incarnation.
  std::unordered_map<uint64_t, member_info> members;
  /// Incarnations that may hold shards (up), sorted.
  std::vector<uint64_t> owners;
  /// Hosts met, by incarnation (this one's included).
  std::unordered_map<uint64_t, caf::actor> hosts;
  /// The incarnations among them that host entities.
  std::unordered_set<uint64_t> hosting;
  /// Hosts asked to introduce themselves.
  std::vector<caf::actor> introducing;
  /// Owner of each shard as last computed.
  std::vector<uint64_t> owner_of;
  /// This member stopped hosting (downed, or the node stops).
  bool stopped = false;
  /// It stopped with its node (calls pass on), not downed (calls are
  /// refused).
  bool graceful = false;
  /// Shutting down: who waits for the entities to stop.
  std::optional<caf::response_promise> shutdown;
  /// Shutting down: the hosts whose answer to `bye` has not come.
  std::unordered_set<uint64_t> byes_pending;
  /// Shutting down: when it began.
  clock::time_point shutdown_since;
  size_t next_worker = 0;
  clock::time_point last_renew;
  bool renewing = false;
  entity_stats figures;
  uint64_t buffered = 0;
  /// The host's log lines about its shards, at most one a second.
  std::unique_ptr<log_limiter> logged;

  static inline const char* name = "ferry.entities";
};

using host_actor = caf::stateful_actor<host_state>;

// -- host.cpp -----------------------------------------------------------------

/// Takes `x`, a call or flush for `shard`: delivers, holds or passes it on.
void admit(host_actor* self, uint32_t shard, item x);

/// Delivers `x` to its entity (activating it) or, for a flush, answers it.
void deliver(host_actor* self, uint32_t shard, item x);

/// Holds `x` in the shard's buffer (refusing it when full).
void hold(host_actor* self, uint32_t shard, item x);

/// Sends `x`, which waited here, on to `host` as a fresh route.
void reroute(host_actor* self, const caf::actor& host, item x);

/// Tells the entity `e` to stop (it saves what changed first).
void stop_entity(host_actor* self, running_entity& e);

/// Writes `line` to the node's log, at most one line a second.
void log_limited(host_actor* self, const std::string& line);

/// Returns the next store worker.
const caf::actor& worker(host_actor* self);

/// Publishes the routes (owners and hosts) to the router.
void publish_routes(host_actor* self);

// -- host_shards.cpp ----------------------------------------------------------

/// Moves shards as the owners say: acquires, hands off, passes on what
/// waits for other members, within `max_moves`.
void rebalance(host_actor* self);

/// Renews the leases held, and stops shards whose lease ran out.
void keep_leases(host_actor* self);

/// A hand-off of `shard` to this member begins.
void on_handoff_begin(host_actor* self, uint32_t shard);

/// The hand-off of `shard` to this member ends.
void on_handoff(host_actor* self, uint32_t shard, uint64_t epoch);

/// An entity of `shard` ended: a hand-off may be complete.
void entity_gone(host_actor* self, uint32_t shard);

/// Stops every shard at once. `graceful` (the node stops): entities save
/// what changed, what waits goes on to the new owners, then the leases go;
/// otherwise (the member was downed) entities are killed and what waits is
/// refused.
void stop_all(host_actor* self, bool graceful);

/// Ends the node's shutdown once its entities stopped and the other hosts
/// answered `bye` (or half the hand-off timeout passed): passes on what
/// waits, releases the leases, answers the shutdown.
void finish_shutdown(host_actor* self);

/// Ends the shard's hold at once (its lease is lost): kills its entities;
/// what waits for them stays for the next holder.
void drop(host_actor* self, uint32_t shard, const std::string& why);

/// Refuses what waits for `shard` (flushes are dropped).
void refuse_buffer(host_actor* self, uint32_t shard);

} // namespace ferry::detail::entities
