// cluster_member: a node's part in its cluster, behind `ferry::cluster`.
//
// A node started with `ferry.cluster.name` makes one: it listens at
// `ferry.cluster.address`, spawns the cluster daemon (cluster/daemon.hpp)
// and exposes it to peers, and reaches other members' daemons by dialing
// them. The cluster sees its node only through `member_host`
// (member_host.hpp), so the cluster stands on the node and the node knows
// no more of it than the public face `ferry::cluster`.
//
// Ending: the destructor stops the daemon and waits until no dial of its
// runs (a dial to an address that does not answer takes up to about twice
// the handshake timeout), so that nothing reaches the node after.
//
// Thread-safety: every member function may be called from any thread.
#pragma once

#include "cluster/published_view.hpp"
#include "member_host.hpp"

#include "ferry/cluster_config.hpp"
#include "ferry/cluster_events.hpp"

#include <caf/actor.hpp>
#include <caf/expected.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ferry::detail::cluster {

class node_host;

class cluster_member {
public:
  /// Joins the node `host` to the cluster `cfg` describes, as the
  /// incarnation `host.node_id()`. Fails with `invalid_config` on a bad
  /// setting and `connect_failed` when the node cannot listen at the
  /// address.
  static caf::expected<std::unique_ptr<cluster_member>>
  start(member_host& host, const cluster_config& cfg);

  ~cluster_member();

  cluster_member(const cluster_member&) = delete;
  cluster_member& operator=(const cluster_member&) = delete;

  /// Returns the members as this node sees them.
  std::vector<member_info> members() const { return view_->members(); }

  /// Returns what a metrics scrape shows of the cluster.
  cluster_figures figures() const;

  /// Sends member events to `whom` from now on.
  void watch(const caf::actor& whom) { view_->watch(whom); }

  /// Stops the member events to `whom`.
  void unwatch(const caf::actor& whom) { view_->unwatch(whom); }

  /// Tells the cluster this node leaves.
  void leave();

  /// Downs the member at `address`. Returns whether one was there.
  caf::expected<bool> down(const std::string& address);

  /// Asks the member at `address` (this node's own address too) to leave.
  /// Returns whether one was there; `errc::cluster_refused` when this node
  /// has no link to it.
  caf::expected<bool> leave(const std::string& address);

  /// Registers `whom` under `key`. Returns false when it was there.
  caf::expected<bool> register_actor(const std::string& key,
                                     const caf::actor& whom);

  /// Returns the actors under `key` on every member.
  caf::expected<std::vector<caf::actor>> find(const std::string& key);

  /// Sends `whom` the actors under `key` now and whenever they change.
  void subscribe(const std::string& key, const caf::actor& whom);

private:
  cluster_member() = default;

  std::shared_ptr<published_view> view_;
  std::shared_ptr<node_host> host_;
  member_host* node_ = nullptr;
  /// The cluster's name.
  std::string name_;
  caf::actor daemon_;
};

/// Splits "host:port"; `invalid_config` naming `key` when it is not one.
caf::expected<std::pair<std::string, uint16_t>>
split_address(const std::string& address, const std::string& key);

} // namespace ferry::detail::cluster
