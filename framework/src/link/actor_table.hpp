// actor_table: the actors a link knows on either side.
//
// - Proxies of the peer's actors, kept until the peer reports the actor
//   down or the link goes down (as CAF's proxy registry does). A proxy of
//   an actor the peer reported down before it had one (a message from it
//   may still wait for its pulled frames) is made terminated; the last
//   `max_recently_down` such reports are remembered. Proxies of actors that
//   sent to this node count against `max_proxies`; proxies this node asks
//   for itself do not.
// - Exported actors: this node's actors the peer may address (senders of
//   messages, spawned actors), until they terminate.
// - Spawned actors: actors the peer spawned here, terminated when the link
//   goes down (the spawning node owns them); at most `max_spawned_actors`
//   live ones, counting spawns under way (`spawn_slot`).
//
// After `close` (the link went down) proxies are made terminated, take no
// slot, and no spawned actor is adopted.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the tables. Actors are released after the lock: dropping the
// last reference to an actor runs its cleanup on the dropping thread.
#pragma once

#include "thread_safety.hpp"

#include <caf/actor.hpp>
#include <caf/error.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ferry::detail {

class actor_table;

/// A place for one actor the peer spawns on this node
/// (`actor_table::reserve_spawn`): given back when destroyed, unless
/// `actor_table::adopt` took it over.
class spawn_slot {
public:
  spawn_slot(spawn_slot&& other) noexcept
    : table_(std::exchange(other.table_, nullptr)) {
    // nop
  }
  spawn_slot& operator=(spawn_slot&&) = delete;
  ~spawn_slot();

private:
  friend class actor_table;
  explicit spawn_slot(actor_table* table) : table_(table) {
    // nop
  }
  actor_table* table_;
};

class actor_table {
public:
  /// Makes a live proxy for the peer's actor `id` (called under the lock).
  using proxy_factory = std::function<caf::strong_actor_ptr(uint64_t id)>;

  /// Peer actors remembered as down without a proxy.
  static constexpr size_t max_recently_down = 1024;

  actor_table(uint64_t max_proxies, uint64_t max_spawned,
              proxy_factory make_proxy);

  /// Returns the proxy for the peer's actor `id`, made if needed (terminated
  /// when the actor was reported down or the table is closed). Returns null
  /// when `limited` and the table holds `max_proxies` live proxies already.
  caf::strong_actor_ptr proxy(uint64_t id, bool limited);

  /// The peer reports that its actor `id` terminated: returns its proxy for
  /// the caller to kill (null when it had none; then the report is
  /// remembered).
  caf::strong_actor_ptr on_down(uint64_t id, const caf::error& reason);

  /// Makes this node's actor `whom` addressable by the peer under its id.
  /// Returns whether it was not already.
  bool add_export(const caf::strong_actor_ptr& whom);

  /// Forgets the exported actor `id` (it terminated).
  void remove_export(uint64_t id);

  /// Returns the exported actor `id`, or null.
  caf::strong_actor_ptr exported(uint64_t id) const;

  /// Takes a slot for an actor the peer spawns; nothing when the peer has
  /// `max_spawned` live ones here already. The table must outlive the slot.
  std::optional<spawn_slot> reserve_spawn();

  /// Records an actor spawned for the peer in `slot`. Returns false,
  /// recording nothing, once the table is closed: the caller ends the actor.
  [[nodiscard]] bool adopt(spawn_slot slot, const caf::actor& whom);

  /// Forgets the spawned actor `id` (it terminated).
  void remove_spawned(caf::actor_id id);

  /// What the table held when it closed.
  struct contents {
    std::vector<caf::strong_actor_ptr> proxies;
    std::unordered_map<uint64_t, caf::strong_actor_ptr> exported;
    std::unordered_map<caf::actor_id, caf::actor> spawned;
  };

  /// Closes the table and returns what it held.
  contents close();

  /// Returns the number of live proxies.
  size_t proxies() const;

  /// Returns the number of live spawned actors.
  size_t spawned() const;

  /// Returns the most live spawned actors allowed.
  uint64_t max_spawned() const { return max_spawned_; }

private:
  friend class spawn_slot;

  /// Gives back a slot of `reserve_spawn` (from `~spawn_slot`).
  void cancel_spawn();

  const uint64_t max_proxies_;
  const uint64_t max_spawned_;
  const proxy_factory make_proxy_;

  mutable mutex mtx_;
  bool closed_ FERRY_GUARDED_BY(mtx_) = false;
  std::unordered_map<uint64_t, caf::strong_actor_ptr>
    proxies_ FERRY_GUARDED_BY(mtx_);
  std::deque<std::pair<uint64_t, caf::error>>
    recently_down_ FERRY_GUARDED_BY(mtx_);
  std::unordered_map<uint64_t, caf::strong_actor_ptr>
    exported_ FERRY_GUARDED_BY(mtx_);
  std::unordered_map<caf::actor_id, caf::actor> spawned_ FERRY_GUARDED_BY(mtx_);
  /// Slots of spawns under way (spawn_slot objects alive).
  uint64_t spawns_reserved_ FERRY_GUARDED_BY(mtx_) = 0;
};

} // namespace ferry::detail
