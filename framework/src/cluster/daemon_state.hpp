// daemon_state: the cluster daemon's state and the parts of its behaviour.
//
// The daemon (cluster/daemon.hpp) is one actor; its work is split in two
// files by concept: daemon.cpp answers messages (joins, gossip, heartbeats,
// the registry, an operator's down) and publishes every change of the view
// (`changed`); daemon_rounds.cpp does what time drives (`tick`: joining,
// gossip rounds, heartbeats and the failure detector, downing) and dials
// other members. This header is what the two share; nothing else includes
// it.
//
// Thread-safety: every function runs in the daemon actor.
#pragma once

#include "cluster/daemon.hpp"
#include "cluster/membership.hpp"
#include "cluster/phi_detector.hpp"
#include "cluster/registry_table.hpp"

#include "log_limiter.hpp"
#include "watcher_set.hpp"

#include <caf/error.hpp>
#include <caf/stateful_actor.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace ferry::detail::cluster {

using clock = std::chrono::steady_clock;

struct daemon_state {
  daemon_settings s;
  std::shared_ptr<cluster_host> host;
  std::shared_ptr<published_view> pub;
  std::unique_ptr<membership> m;
  // Peer daemons by incarnation, and dials under way (by address).
  std::map<uint64_t, caf::actor> peers;
  std::set<std::string> dialing;
  // An address whose dial failed is tried again after a pause.
  std::map<std::string, clock::time_point> redial_after;
  // Failed dials are logged at most once per 10 s.
  std::unique_ptr<log_limiter> dial_log =
    std::make_unique<log_limiter>(std::chrono::seconds{10});
  // The members this node watches, and their detectors.
  std::map<uint64_t, phi_detector> watched;
  // Joining: the seed asked next, whether a join is under way.
  size_t next_seed = 0;
  bool join_pending = false;
  clock::time_point started;
  clock::time_point last_gossip;
  clock::time_point last_heartbeat;
  // Downing: the unreachable set and since when it held still.
  std::vector<uint64_t> unreachable;
  clock::time_point unreachable_since;
  // The view last published, for the events.
  gossip published;
  bool published_converged = false;
  // When this node saw the current version first (for the convergence
  // time).
  clock::time_point version_seen_at;
  // Whether this node acts as a member no more (downed, or removed), and
  // whether it asked to leave.
  bool stopped = false;
  bool left = false;
  std::mt19937_64 rng{std::random_device{}()};
  // The cluster registry, and the local actors that follow its keys.
  registry_table registry;
  std::map<std::string, watcher_set> subscribers;

  static inline const char* name = "ferry.cluster";
};

using daemon_actor = caf::stateful_actor<daemon_state>;

// -- daemon.cpp ---------------------------------------------------------------

/// Returns whether this node acts as a member no more (downed, or left);
/// a downed node then ends its link to incarnation `uid`, which still
/// contacts it.
bool refuse_as_downed(daemon_actor* self, uint64_t uid);

/// Returns whether this node is the first seed of its list.
bool first_seed(const daemon_state& st);

/// Returns the view, encoded.
std::vector<std::byte> encoded_view(const daemon_state& st);

/// Tells `to` of every local registry entry.
void send_entries(daemon_actor* self, const caf::actor& to);

/// Publishes the view after a change: the members, the events since the
/// last publication, the leader's actions, and the view to every peer that
/// has not seen a new version.
void changed(daemon_actor* self);

// -- daemon_rounds.cpp --------------------------------------------------------

/// Keeps `whom` as the daemon of incarnation `uid` until its proxy goes
/// down with its link.
void add_peer(daemon_actor* self, uint64_t uid, const caf::actor& whom);

/// Sends the view to `to`.
void send_gossip(daemon_actor* self, const caf::actor& to);

/// Connects to the daemon at `address` on a detached actor of its own;
/// `done` gets the daemon, or nothing when the dial failed.
void dial(daemon_actor* self, const std::string& address,
          std::function<void(caf::actor)> done);

/// Does what time drives, then schedules the next tick.
void tick(daemon_actor* self);

} // namespace ferry::detail::cluster
