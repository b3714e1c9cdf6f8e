// A ferry node: one per process.
//
// A node owns a `caf::actor_system`, the serializer registry, a client of the
// host's shared object store (on by default), a table of links to other
// nodes, and the transport they travel on: TCP connections of ferry's own,
// plain or TLS, run by the node's I/O threads, and same-host lanes between
// nodes that share the store. User actors stay plain CAF actors; a node
// hands out *proxies* for actors on other nodes, and any message sent to a
// proxy is encoded with the link's family, spilled to the store where large,
// and delivered on the other node as an ordinary typed message. Requests,
// responses, `monitor` and down messages behave as in CAF.
//
// Usage:
//
//     ferry::node_config cfg;
//     cfg.add_message_type<order>("order");
//     auto n = ferry::node::start(cfg);               // expected<unique_ptr>
//     auto port = (*n)->publish(my_actor);            // serve my_actor
//     auto peer = (*n)->remote_actor("10.0.0.2", 4242); // a proxy
//     self->request(*peer, 5s, order{...}).receive(...);
//
// Thread-safety: all member functions may be called from any thread.
// `remote_actor` and `remote_spawn` block the calling thread for the
// handshake (at most about twice `ferry.transport.handshake-timeout`) and
// the answer; don't call them from inside an actor's message handler.
#pragma once

#include "ferry/cluster.hpp"
#include "ferry/cluster_events.hpp"
#include "ferry/entities.hpp"
#include "ferry/fwd.hpp"
#include "ferry/link_stats.hpp"
#include "ferry/node_config.hpp"
#include "ferry/node_events.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/expected.hpp>
#include <caf/message.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace ferry::store {
class object_store;
} // namespace ferry::store

namespace ferry {

namespace detail {
class node_impl;
} // namespace detail

class node {
public:
  /// Builds the actor system from `cfg` (after `cfg.parse()`), attaches to
  /// the host store when enabled, and starts the node's I/O threads; a TLS
  /// node reads its credentials here. Fails with `errc::invalid_config` on a
  /// bad setting, such as an unknown family, a TLS file that is unreadable
  /// or does not fit, a wrong key passphrase, or a config that runs another
  /// node already.
  [[nodiscard]] static caf::expected<std::unique_ptr<node>>
  start(node_config& cfg);

  node(const node&) = delete;
  node& operator=(const node&) = delete;

  /// Ends every link in order (what it queued goes out, then a goodbye; the
  /// node waits at most 2 s for its connections), so the peers hear
  /// `node_down` and their proxies terminate with
  /// `caf::exit_reason::remote_link_unreachable`; then shuts the actor
  /// system down.
  ~node();

  /// Returns the actor system.
  caf::actor_system& system();

  /// Returns this node's name.
  const std::string& name() const;

  /// Returns the host store, or null when disabled or unavailable.
  store::object_store* store();

  /// Returns the serializer registry.
  serializers::registry& registry();

  /// Makes `whom` this node's default actor and listens on `port` (0: any
  /// free port) at `address`. Returns the port. With an invalid `whom` the
  /// node only listens (peers reach exposed actors and `remote_spawn`).
  [[nodiscard]] caf::expected<uint16_t>
  publish(const caf::actor& whom, uint16_t port = 0,
          const std::string& address = "127.0.0.1");

  /// Lets peers look `whom` up under `name` (see `remote_actor`). Ignores an
  /// invalid `whom`.
  void expose(const std::string& name, const caf::actor& whom);

  /// Connects to the node listening at `host`:`port` (handshake once per
  /// peer) and returns a proxy for its default actor, or for the actor it
  /// exposes under `name`. Fails with `errc::connect_failed` when nothing
  /// answers there, `errc::handshake_failed` when the handshake fails
  /// (another version, a TLS refusal, its timeout), `errc::no_common_family`
  /// when the two nodes' families do not meet (naming both lists),
  /// `errc::no_such_actor` when the peer has no such actor, and
  /// `caf::sec::request_timeout` when a lookup by name gets no answer within
  /// `ferry.transport.handshake-timeout`.
  [[nodiscard]] caf::expected<caf::actor>
  remote_actor(const std::string& host, uint16_t port,
               const std::string& name = "");

  /// Spawns the actor type registered as `type_name` (with
  /// `cfg.add_actor_type`) on the node at `host`:`port` with `args` and
  /// returns a proxy for it. Fails as `remote_actor` does when connecting,
  /// with the peer's refusal (`errc::no_such_actor`, `errc::too_many_actors`, a
  /// decoding error), or with `caf::sec::request_timeout` after `timeout`
  /// (an actor the peer spawns anyway lives until it ends or the link goes
  /// down).
  [[nodiscard]] caf::expected<caf::actor>
  remote_spawn(const std::string& host, uint16_t port,
               const std::string& type_name, caf::message args,
               std::chrono::milliseconds timeout = std::chrono::seconds{10});

  /// Returns a snapshot of every link's counters.
  std::vector<link_stats> stats() const;

  /// Returns the counters of the link to the node named `peer`.
  [[nodiscard]] caf::expected<link_stats> stats(const std::string& peer) const;

  /// Returns the port of the node's Prometheus endpoint (the one picked
  /// when `ferry.metrics.port` is 0), or 0 when the endpoint is off.
  uint16_t metrics_port() const;

  /// Returns what the Prometheus endpoint serves: the links' counters
  /// (`stats()`), the host store's figures and the process' resident
  /// memory in Prometheus' text exposition format (docs/monitoring.md).
  std::string metrics_text() const;

  /// Sends `whom` a `node_up` whenever this node makes a link to another
  /// node and a `node_down` whenever such a link goes down
  /// (ferry/node_events.hpp), until `whom` ends or `unwatch_nodes`.
  void watch_nodes(const caf::actor& whom);

  /// Stops the node events to `whom`.
  void unwatch_nodes(const caf::actor& whom);

  /// Returns every node this node has had a link to, and whether the link
  /// is up now (why it went down, if not).
  std::vector<peer_state> peers() const;

  /// Returns the cluster this node belongs to (ferry/cluster.hpp): its
  /// members, their events, the registry, leaving and downing. A node whose
  /// `ferry.cluster.name` is not set joins none; its cluster lists no
  /// members (docs/cluster.md).
  ferry::cluster& cluster();
  const ferry::cluster& cluster() const;

  /// Returns the sharded entities this node reaches and, when its config
  /// registers entity types, hosts (ferry/entities.hpp, docs/entities.md).
  ferry::entities& entities();

private:
  explicit node(std::unique_ptr<detail::node_impl> impl);

  std::unique_ptr<detail::node_impl> impl_;
  std::unique_ptr<ferry::cluster> cluster_;
  std::unique_ptr<ferry::entities> entities_;
};

} // namespace ferry
