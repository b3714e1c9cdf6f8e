// node_impl: everything a ferry node owns.
//
// A node is one actor system, a registry, an optional client of the host
// store, its transport (I/O threads, listeners, connections) and its links.
// Its links reach it only through `link_host` (link/link_host.hpp), which
// node_impl implements. node_impl composes:
// - `net::io_threads` (transport/io_threads.hpp): the threads every
//   connection of the node reads, writes and keeps time on;
// - listeners (transport/listener.hpp) for `publish`, and dials for
//   `connect` (node/transport.cpp), each connection going through the
//   handshake (node/handshake.hpp) and then to its link's dispatcher
//   (link/link_dispatch.hpp);
// - `link_table` (node/link_table.hpp): links by peer node id;
// - `landings` (node/landings.hpp): where inline store handles land while
//   a frame is read;
// - `exposed_actors` (node/exposed_actors.hpp): the actors peers find by
//   name;
// - `node_watch` (node/node_watch.hpp): the peers this node has had links
//   to, and the actors that hear when links come and go;
// - `pool_settings`: this node's share in the process-wide vector pool;
// - `relay_directory` and `relay_sources` (transfer/relay_directory.hpp,
//   transfer/relay_sources.hpp): the two sides of relaying store objects sent
//   to several hosts;
// - `lane::readers` (lane/readers.hpp): the threads that take what peers
//   of this host send through same-host lanes;
// - `metrics_server` (metrics/metrics_server.hpp) and `dashboard`
//   (metrics/dashboard.hpp): the HTTP endpoint, when `ferry.metrics.port`
//   is set: metrics, the dashboard page and its JSON API, all from
//   `figures()`;
// - the linker (link/actor_links.hpp): the actor that tells peers of the
//   links local actors make with their actors.
//
// Shutdown order (the destructor): the metrics endpoint stops first (it
// reads the node), then the listeners; the links end in order (what they
// queued goes out, then a goodbye), which wakes senders waiting for credit;
// the node waits a moment for their connections to finish; the I/O threads
// and the lane readers stop (no frame arrives after); the node waits until
// no thread uses a link any more (proxies, the puller and credit tokens
// hold links weakly; a thread that took a link uses the node through it);
// and the actor system stops last.
//
// Thread-safety: every member function may be called from any thread.
#pragma once

#include "activity_counter.hpp"
#include "lane/readers.hpp"
#include "lane/ring.hpp"
#include "link/link_state.hpp"
#include "log_limiter.hpp"
#include "member_host.hpp"
#include "metrics/dashboard.hpp"
#include "metrics/exposition.hpp"
#include "metrics/metrics_server.hpp"
#include "node/exposed_actors.hpp"
#include "node/landings.hpp"
#include "node/link_table.hpp"
#include "node/node_watch.hpp"
#include "node/pool_settings.hpp"
#include "thread_safety.hpp"
#include "transfer/relay_directory.hpp"
#include "transfer/relay_sources.hpp"
#include "transport/connection.hpp"
#include "transport/io_threads.hpp"
#include "transport/listener.hpp"
#include "wire/control.hpp"

#include "ferry/link_config.hpp"
#include "ferry/node_config.hpp"

#include "ferry/serializers/registry.hpp"
#include "ferry/store/object_store.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ferry::detail {

namespace net {
class tls_context;
} // namespace net

class link_dispatch;

class node_impl final : public link_host, public member_host {
public:
  explicit node_impl(node_config& cfg);

  ~node_impl();

  node_impl(const node_impl&) = delete;
  node_impl& operator=(const node_impl&) = delete;

  /// Starts what the node needs besides its actor system: malloc tuning,
  /// the vector pool's limits, the store, the I/O threads. Fails with
  /// `invalid_config` on an unknown family.
  [[nodiscard]] caf::error init();

  node_config& config() { return cfg_; }

  // -- link_host --------------------------------------------------------------

  caf::actor_system& system() override { return sys_; }
  const clock& time() const override { return *time_; }
  serializers::registry& registry() override { return *registry_; }
  store::object_store* store() override { return store_ ? &*store_ : nullptr; }
  const std::string& node_name() const override { return cfg_.node_name; }
  void log(const std::string& line) const override;
  caf::strong_actor_ptr exposed(uint64_t id) const override {
    return exposed_.find(id);
  }
  activity_counter& live_links() override { return live_links_; }
  relay_offer offer_relay(uint64_t object_id,
                          const std::string& peer) override {
    return relay_offers_.offer(object_id, peer);
  }
  std::shared_ptr<relay_registry> relays() override { return relays_; }
  std::shared_ptr<link_state> link_to(const std::string& name) override;
  void post_link_change(link_change x) override;
  caf::expected<uint64_t> lookup(const std::string& name) const override {
    return exposed_.lookup(name);
  }
  caf::expected<uint64_t>
  spawn(spawn_request& req, const std::shared_ptr<link_state>& link) override;
  landings& imports() override { return imports_; }
  void link_lost(const std::shared_ptr<link_state>& link,
                 const caf::error& why) override {
    link_lost(link, why, false);
  }

  // -- member_host ------------------------------------------------------------

  uint64_t node_id() const override { return id_; }
  caf::expected<uint16_t> listen(const std::string& address,
                                 uint16_t port) override;
  void expose(const std::string& name, const caf::actor& whom) override {
    exposed_.expose(name, whom);
  }
  caf::expected<caf::actor> dial(const std::string& host, uint16_t port,
                                 const std::string& name) override {
    return remote_actor(host, port, name);
  }
  void disconnect(uint64_t id, const caf::error& why) override;
  void set_cluster_figures(std::function<cluster_figures()> source) override;
  void set_cluster_actions(cluster_actions actions) override;
  std::string figures_json() override;

  // -- the node's own ---------------------------------------------------------

  /// Sets where scrapes read the node's entities' figures (nothing: they
  /// show none). Set by `node` while its entities run.
  void set_entity_figures(std::function<entity_stats()> source);

  /// Returns this node's id: 64 random bits drawn at start (never 0).
  uint64_t id() const { return id_; }

  /// Connects to `host`:`port` (or takes the link there) and returns a
  /// proxy of the peer's default actor, or of the actor it exposes as
  /// `name` (see node::remote_actor); node/remote.cpp.
  caf::expected<caf::actor> remote_actor(const std::string& host, uint16_t port,
                                         const std::string& name);

  /// Asks the node at `host`:`port` to spawn `type_name` with `args` (see
  /// node::remote_spawn); node/remote.cpp.
  caf::expected<caf::actor> remote_spawn(const std::string& host, uint16_t port,
                                         const std::string& type_name,
                                         const caf::message& args,
                                         std::chrono::milliseconds timeout);

  /// Returns the objects this node relays to peers pulling them after it
  /// (transfer/relay_sources.hpp).
  const std::shared_ptr<relay_sources>& relay_table() const { return relays_; }

  /// Returns the view of peers and the actors that watch it.
  node_watch& watch() { return watch_; }

  // -- handshakes (node/handshake.cpp) ---------------------------------------

  /// Returns this node's intro.
  intro make_intro() const;

  /// Returns this node's hello for a link with the config `cfg`.
  hello make_hello(const link_config& cfg) const;

  /// Returns true if the host store is shared with the node of `peer`.
  bool shares_store_with(const intro& peer) const;

  /// Returns the link config for the peer named `name` reached at
  /// `address` (empty for a peer that connected to this node).
  const link_config& config_for(const std::string& name,
                                const std::string& address) const;

  /// Makes the link to `peer` over `conn` with the config `cfg` (the
  /// handshake agreed on it), unless a live link to that node exists:
  /// then returns it with `made` false. `first` runs before anything can
  /// send on a new link (the welcome). `offered` is the ring this node
  /// offered for a same-host lane (consumed). The link's dispatcher, which
  /// the connection now reports to, goes to `dispatch`.
  link_table::admission
  make_link(const std::shared_ptr<net::connection>& conn, const peer_info& peer,
            const link_config& cfg, std::vector<std::string> send_families,
            std::optional<lane::ring>& offered,
            std::shared_ptr<net::connection::handler>& dispatch,
            const std::function<void()>& first);

  /// Makes the ring this node offers a peer to receive a same-host lane
  /// through (logs why not otherwise); see node/lanes.cpp.
  std::optional<lane::ring> offer_lane(const link_config& cfg);

  /// Connects to `host`:`port` (or returns the existing link); see
  /// node/connect.cpp.
  caf::expected<std::shared_ptr<link_state>> connect(const std::string& host,
                                                     uint16_t port);

  /// The link `link` lost its way to the peer (`why`): takes it down and
  /// tells the node's watchers. A link with an incoming same-host lane
  /// first reads what the ring still holds (`link_state::drain_lane`); its
  /// reader calls again with `final` once it has.
  void link_lost(const std::shared_ptr<link_state>& link, const caf::error& why,
                 bool final);

  // -- transport (node/transport.cpp) ----------------------------------------

  /// Makes this a TLS node (before `init`); null: a plain node.
  void set_tls(std::shared_ptr<const net::tls_context> x);

  /// Returns the node's TLS context (null: a plain node).
  const net::tls_context* tls() const { return tls_.get(); }

  /// Listens on `address`:`port` (0: any free port); returns the port.
  caf::expected<uint16_t> open_port(uint16_t port, const std::string& address);

  /// Opens a TCP connection to `host`:`port` and starts ferry's handshake
  /// on it, reporting to `waiter`.
  void dial(const std::string& host, uint16_t port,
            std::shared_ptr<struct connect_wait> waiter);

  /// Returns the stream maker of a connection this node accepts (`server`)
  /// or opens to `address`.
  net::stream_maker streams(bool server, const std::string& address) const;

  /// Returns the times a new connection keeps.
  net::connection_timing timing() const;

  // -- links ------------------------------------------------------------------

  /// Returns the link to node `id`, or null.
  std::shared_ptr<link_state> find_link(uint64_t id) const {
    return links_.find(id);
  }

  /// Returns the link to the node named `name`, or null.
  std::shared_ptr<link_state> find_link(const std::string& name) const {
    return links_.find(name);
  }

  std::vector<std::shared_ptr<link_state>> links() const {
    return links_.all();
  }

  /// Returns the link table (handshakes and connects use it).
  link_table& table() { return links_; }

  // -- exposed actors ---------------------------------------------------------

  void publish_default(const caf::actor& whom) {
    exposed_.publish_default(whom);
  }

  // -- metrics ----------------------------------------------------------------

  /// Returns the node's figures in Prometheus' text exposition format.
  std::string metrics_text();

  /// Returns the node's figures now (any thread).
  node_figures figures();

  // -- links ------------------------------------------------------------------

  /// Returns the port of the metrics endpoint (0: none).
  uint16_t metrics_port() const { return metrics_ ? metrics_->port() : 0; }

  // -- logging ----------------------------------------------------------------

  /// Logs a line about a connection that never became a link (refused or
  /// failed handshakes): at most one line a second.
  void log_unlinked(const std::string& line);

private:
  /// Checks the families named in the config's link settings.
  caf::error check_families() const;

  /// Attaches to the host store (or logs why the node runs without one).
  void attach_store();

  /// Starts reading `link`'s incoming lane `in`.
  void read_lane(const std::shared_ptr<link_state>& link,
                 std::shared_ptr<lane::ring> in,
                 std::shared_ptr<link_dispatch> dispatch,
                 std::shared_ptr<transport> out);

  /// Takes every link down in order and waits (bounded) for their
  /// connections to end.
  void close_links();

  node_config& cfg_;
  const uint64_t id_;
  /// The node's clock (node_config::clock, or the steady clock).
  const clock* const time_;
  landings imports_;
  activity_counter live_links_;
  /// Counts connections not yet ended (the shutdown waits for them).
  std::shared_ptr<activity_counter> open_connections_ =
    std::make_shared<activity_counter>();
  /// Made before the actor system starts its threads, which use it (the
  /// relay sweeper, the dispatchers, the pullers): a thread's start orders
  /// what was made before it, where CAF's own hand-offs between threads are
  /// invisible to a race detector. Shared with the pullers, which may end
  /// after the node; the destructor lets go of it before the store, whose
  /// sealed objects its sources hold.
  std::shared_ptr<relay_sources> relays_;
  /// The threads reading same-host lanes. Made before the actor system for
  /// the same reason; stopped by the destructor before the system stops.
  lane::readers lanes_;
  caf::actor_system sys_;
  std::shared_ptr<serializers::registry> registry_;
  std::optional<store::object_store> store_;
  detail::relay_directory relay_offers_{std::chrono::seconds{5}, *time_};
  /// Lets relayed objects go after their linger.
  caf::actor relay_sweeper_;
  /// Trims the vector pool while the node runs (null when the pool is off).
  caf::actor janitor_;
  caf::actor linker_;
  std::optional<pool_settings> pool_;
  link_table links_;
  node_watch watch_;
  exposed_actors exposed_;
  log_limiter unlinked_logged_;
  std::shared_ptr<const net::tls_context> tls_;
  std::unique_ptr<net::io_threads> io_;
  /// Guards `listeners_`.
  mutex listen_mtx_;
  std::vector<std::shared_ptr<net::listener>>
    listeners_ FERRY_GUARDED_BY(listen_mtx_);
  /// Guards the sources of figures that scrapes read from the metrics
  /// thread (a source is called under it, so it is not unset mid-call).
  mutex figures_mtx_;
  std::function<cluster_figures()>
    cluster_figures_ FERRY_GUARDED_BY(figures_mtx_);
  std::function<entity_stats()> entity_figures_ FERRY_GUARDED_BY(figures_mtx_);
  cluster_actions cluster_actions_ FERRY_GUARDED_BY(figures_mtx_);
  /// What the endpoint answers; called on the server's thread only.
  std::unique_ptr<dashboard> dashboard_;
  /// Last: it reads every member above from its own thread.
  std::unique_ptr<metrics_server> metrics_;
};

} // namespace ferry::detail
