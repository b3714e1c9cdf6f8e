// cluster_member: a node's part in its cluster, on the node's public API.
//
// A node started with `ferry.cluster.name` makes one: it listens at
// `ferry.cluster.address` (`node::publish`), spawns the cluster daemon
// (cluster/daemon.hpp) and exposes it to peers, and reaches other members'
// daemons with `node::remote_actor`. The cluster layer sees the node only
// through its public API (and `node_access`: its log, and ending a link to
// a downed member), so the direction stays cluster -> node -> link ->
// transport.
//
// Ending: the destructor stops the daemon and waits until no dial of its
// runs (a dial to an address that does not answer takes up to about twice
// the handshake timeout), so that nothing reaches the node after.
//
// Thread-safety: every member function may be called from any thread.
#pragma once

#include "cluster/published_view.hpp"

#include "ferry/cluster_config.hpp"
#include "ferry/cluster_events.hpp"

#include <caf/actor.hpp>
#include <caf/expected.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ferry {
class node;
} // namespace ferry

namespace ferry::detail::cluster {

class node_host;

/// What the member needs of its node beyond the public API.
struct node_access {
  /// Writes a line to the node's log.
  std::function<void(const std::string&)> log;
  /// Ends the node's link to node `uid` (cluster_host::disconnect).
  std::function<void(uint64_t, const caf::error&)> disconnect;
};

class cluster_member {
public:
  /// Joins `n` to the cluster `cfg` describes as incarnation `uid`.
  /// Fails with `invalid_config` on a bad setting and `connect_failed` when
  /// the node cannot listen at the address.
  static caf::expected<std::unique_ptr<cluster_member>>
  start(node& n, const cluster_config& cfg, uint64_t uid, node_access access);

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
  caf::actor daemon_;
  caf::actor_system* sys_ = nullptr;
};

/// Splits "host:port"; `invalid_config` naming `key` when it is not one.
caf::expected<std::pair<std::string, uint16_t>>
split_address(const std::string& address, const std::string& key);

} // namespace ferry::detail::cluster
