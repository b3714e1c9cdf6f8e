// daemon: the actor that keeps one node in its cluster.
//
// Each node of a cluster runs one daemon, exposed to peers as
// `daemon_name` (cluster/protocol.hpp). It owns the node's `membership`
// and drives it with time: it asks the seeds to let the node in (or forms
// the cluster as the first seed), gossips the view every gossip interval to
// one member (preferring those that have not seen it), sends heartbeats to
// the members it watches (the `monitored_by` members after it in the ring
// of incarnations) and feeds their answers to a phi-accrual detector, marks
// members unreachable and reachable again, moves members on while it leads,
// applies the downing policy once the unreachable set has held still for
// `stable_after`, and publishes the view and its events
// (cluster/published_view.hpp). A node downed (by its own side's verdict or
// by the others) stops answering as a member; it rejoins only as a new
// incarnation (a restart).
//
// Connecting to other members blocks for up to about twice the handshake
// timeout, so each dial runs on a detached actor of its own and reports
// back; `cluster_host` is what the daemon needs of its node.
//
// Thread-safety: an actor; `cluster_host` may be called from the dialers'
// threads.
#pragma once

#include "clock.hpp"
#include "cluster/downing.hpp"
#include "cluster/published_view.hpp"

#include "ferry/cluster_config.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/expected.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace ferry::detail::cluster {

/// What the daemon needs of its node.
class cluster_host {
public:
  virtual ~cluster_host();

  /// Connects to the node at `address` ("host:port") and returns its
  /// daemon. Blocks for up to about twice the handshake timeout.
  virtual caf::expected<caf::actor> dial(const std::string& address) = 0;

  /// Ends the node's link to the node of incarnation `uid` (if there is
  /// one): what was queued goes out, then a goodbye; the node's watchers
  /// hear `node_down` with `why`.
  virtual void disconnect(uint64_t uid, const caf::error& why) = 0;

  /// Writes `line` to the node's log.
  virtual void log(const std::string& line) = 0;

  /// Returns the node's figures as the dashboard's JSON snapshot.
  virtual std::string figures_json() = 0;
};

struct daemon_settings {
  cluster_config cfg;
  downing_policy policy = downing_policy::keep_majority;
  /// This node's name and incarnation.
  std::string node_name;
  uint64_t uid = 0;
  /// The node's clock.
  const clock* time = &clock::steady();
};

/// Spawns the daemon. It starts joining at once.
caf::actor spawn_daemon(caf::actor_system& sys, daemon_settings settings,
                        std::shared_ptr<cluster_host> host,
                        std::shared_ptr<published_view> view);

} // namespace ferry::detail::cluster
