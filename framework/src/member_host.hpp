// member_host: what a cluster member needs of its node, and nothing more.
//
// The cluster stands on the node: node → cluster is no include, cluster →
// node is this interface (docs/architecture.md, "Rooms"). A member listens
// at its cluster address, exposes its daemon to peers, dials other members'
// daemons, writes to the node's log, ends the node's links to downed
// members, and shows its figures in the node's metrics, all through the
// calls below, which the node implements (node/node_impl.hpp). The node
// makes its member when it starts and ends it before itself.
//
// Thread-safety: every member function may be called from any thread while
// the node lives.
#pragma once

#include "clock.hpp"
#include "metrics/exposition.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace ferry::detail {

/// What the node's HTTP endpoint (metrics/dashboard.hpp) asks of the
/// cluster: on an operator's word, down the member at an address or ask
/// the member at an address (this node's own too) to leave, each returning
/// whether a member was there; and, for anyone, the figures of the member
/// at an address as its JSON snapshot (empty: no member there).
struct cluster_actions {
  std::function<caf::expected<bool>(const std::string&)> down;
  std::function<caf::expected<bool>(const std::string&)> leave;
  std::function<caf::expected<std::string>(const std::string&)> figures;
};

class member_host {
public:
  virtual ~member_host();

  /// Returns the node's actor system.
  virtual caf::actor_system& system() = 0;

  /// Returns the node's clock (the cluster's failure detection and downing
  /// read it).
  virtual const clock& time() const = 0;

  /// Returns the node's name.
  virtual const std::string& node_name() const = 0;

  /// Returns the node's id: 64 random bits drawn at its start, the
  /// member's incarnation.
  virtual uint64_t node_id() const = 0;

  /// Writes `line` to the node's log.
  virtual void log(const std::string& line) const = 0;

  /// Returns the node's figures as the dashboard's JSON snapshot (other
  /// members' pages show them).
  virtual std::string figures_json() = 0;

  /// Listens on `address`:`port` (0: any free port); returns the port, or
  /// `errc::connect_failed` naming the address.
  virtual caf::expected<uint16_t> listen(const std::string& address,
                                         uint16_t port) = 0;

  /// Lets peers look `whom` up under `name`.
  virtual void expose(const std::string& name, const caf::actor& whom) = 0;

  /// Connects to the node at `host`:`port` (once per peer) and returns a
  /// proxy of the actor it exposes as `name`. Blocks for up to about twice
  /// the handshake timeout.
  virtual caf::expected<caf::actor> dial(const std::string& host, uint16_t port,
                                         const std::string& name) = 0;

  /// Ends the node's link to node `id` in order, if there is one; the
  /// node's watchers hear `node_down` with `why`.
  virtual void disconnect(uint64_t id, const caf::error& why) = 0;

  /// Makes `source` what a scrape of the node's metrics shows of its
  /// cluster (empty: nothing).
  virtual void set_cluster_figures(std::function<cluster_figures()> source) = 0;

  /// Makes `actions` what the node's endpoint does on an operator's word
  /// (empty functions: nothing, the endpoint answers that the node joins no
  /// cluster).
  virtual void set_cluster_actions(cluster_actions actions) = 0;
};

} // namespace ferry::detail
