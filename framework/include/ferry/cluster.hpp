// The cluster a node belongs to, as its program sees it.
//
// A node started with `ferry.cluster.name` set (ferry/cluster_config.hpp)
// joins that cluster: it finds the other members through the seeds, shares
// one gossiped membership view with them, watches some of them for
// failures, and downs the losing side of a partition (docs/cluster.md).
// `node::cluster()` returns this face of it; a node that joins no cluster
// returns one too, which lists no members and answers the calls that need a
// cluster with `errc::cluster_refused`.
//
// Usage:
//
//     auto& c = n->cluster();
//     c.watch_members(self);                  // member_up, member_down, ...
//     c.register_actor("workers", worker);    // found on every member
//     auto workers = c.find_actors("workers");
//
// The cluster ends with its node (before it: the node's destructor stops
// the member first).
//
// Thread-safety: every member function may be called from any thread.
#pragma once

#include "ferry/cluster_config.hpp"
#include "ferry/cluster_events.hpp"

#include <caf/actor.hpp>
#include <caf/expected.hpp>

#include <memory>
#include <string>
#include <vector>

namespace ferry {

class node;

namespace detail {
class member_host;
namespace cluster {
class cluster_member;
} // namespace cluster
} // namespace detail

class cluster {
public:
  ~cluster();

  cluster(const cluster&) = delete;
  cluster& operator=(const cluster&) = delete;

  /// Returns whether the node joins a cluster (`ferry.cluster.name` is
  /// set).
  bool joined() const { return member_ != nullptr; }

  /// Returns the members as this node sees them (empty when the node joins
  /// no cluster).
  std::vector<member_info> members() const;

  /// Sends `whom` the member events (ferry/cluster_events.hpp) as this
  /// node's view changes, until `whom` ends or `unwatch_members`.
  void watch_members(const caf::actor& whom);

  /// Stops the member events to `whom`.
  void unwatch_members(const caf::actor& whom);

  /// Tells the cluster that this node leaves: it becomes `leaving`, then
  /// `exiting`, and the others remove it. Nothing when the node joins no
  /// cluster.
  void leave();

  /// Downs the member at `address` ("host:port") on an operator's word.
  /// Returns whether a member was there; `errc::cluster_refused` when the
  /// node joins no cluster.
  [[nodiscard]] caf::expected<bool> down_member(const std::string& address);

  /// Registers `whom`, an actor of this node, under `key` in the cluster
  /// registry: every member finds it there until it ends or this node
  /// leaves. Returns false when it was registered under `key` already;
  /// `errc::cluster_refused` when the node joins no cluster.
  [[nodiscard]] caf::expected<bool> register_actor(const std::string& key,
                                                   const caf::actor& whom);

  /// Returns the actors registered under `key` on every member, as this
  /// node knows them (eventually consistent: docs/cluster.md).
  [[nodiscard]] caf::expected<std::vector<caf::actor>>
  find_actors(const std::string& key);

  /// Sends `whom` a `registry_listing` of `key` now and whenever the actors
  /// under it change, until `whom` ends.
  void subscribe_actors(const std::string& key, const caf::actor& whom);

private:
  friend class node;

  /// Joins the node `host` to the cluster `cfg` names (none when its name
  /// is empty). Fails with `invalid_config` on a bad setting and
  /// `connect_failed` when the node cannot listen at the cluster address.
  static caf::expected<std::unique_ptr<cluster>>
  start(detail::member_host& host, const cluster_config& cfg);

  cluster(std::string node_name,
          std::unique_ptr<detail::cluster::cluster_member> member);

  std::string node_name_;
  std::unique_ptr<detail::cluster::cluster_member> member_;
};

} // namespace ferry
