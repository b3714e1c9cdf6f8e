// node_impl: everything a ferry node owns.
//
// A node is one actor system with the middleman, a registry, an optional
// client of the host store, a gateway (the actor peers send to), and its
// links. node_impl composes them:
// - `landings` (node/landings.hpp): where the reading of CAF's messages
//   puts bytes directly, bound to the node's config for as long as the
//   actor system lives;
// - `link_table` (node/link_table.hpp): links by peer and the tokens of
//   handshakes under way; handshakes themselves are in node/handshake.cpp
//   (answering) and node/connect.cpp (connecting);
// - `early_arrivals` (node/early_arrivals.hpp): what a peer sends before
//   this node's side of their link exists;
// - `exposed_actors` (node/exposed_actors.hpp): the actors peers find by
//   name;
// - `node_watch` (node/node_watch.hpp): the peers this node has had links
//   to, and the actors that hear when links come and go;
// - `pool_settings`: this node's share in the process-wide vector pool;
// - `relay_directory` and `relay_sources` (link/relay_directory.hpp,
//   link/relay_sources.hpp): the two sides of relaying store objects sent
//   to several hosts;
// - `lane::readers` (lane/readers.hpp): the threads that take what peers
//   of this host send through same-host lanes;
// - `metrics_server` (metrics/metrics_server.hpp): the Prometheus endpoint,
//   when `ferry.metrics.port` is set; it renders `metrics_text()`;
// - the linker (link/actor_links.hpp): the actor that tells peers of the
//   links local actors make with their actors.
//
// Shutdown order (the destructor): the metrics endpoint stops first (it
// reads the node), links go down next (waking senders that
// wait for credit), then the gateway lets go of the node once its running
// calls are done, then the lane readers end (lane/readers.hpp), then the node waits until no thread uses a link any more
// (proxies, the puller and credit tokens hold links weakly; a thread that
// took a link uses the node through it), and the actor system stops last,
// before the read context it reads through is unbound.
//
// Thread-safety: every member function may be called from any thread.
#pragma once

#include "activity_counter.hpp"
#include "lane/readers.hpp"
#include "lane/ring.hpp"
#include "link/link_state.hpp"
#include "log_limiter.hpp"
#include "metrics/metrics_server.hpp"
#include "node/early_arrivals.hpp"
#include "node/exposed_actors.hpp"
#include "node/landings.hpp"
#include "node/link_table.hpp"
#include "node/node_watch.hpp"
#include "node/pool_settings.hpp"
#include "link/relay_directory.hpp"
#include "link/relay_sources.hpp"
#include "wire/control.hpp"
#include "wire/read_context.hpp"

#include "ferry/link_config.hpp"
#include "ferry/node_config.hpp"

#include "ferry/serializers/registry.hpp"
#include "ferry/store/object_store.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/node_id.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ferry::detail {

class tls_settings;

/// How long a handshake step (identify, hello, lookup) may take.
inline constexpr auto handshake_timeout = std::chrono::seconds{30};

/// Connections `connect` makes to one address at most before it gives up:
/// one, once more after a connection lost during the handshake, and again
/// when CAF handed out a connection it had closed.
inline constexpr int max_connect_attempts = 3;

class node_impl {
public:
  explicit node_impl(node_config& cfg);

  ~node_impl();

  node_impl(const node_impl&) = delete;
  node_impl& operator=(const node_impl&) = delete;

  /// Starts what the node needs besides its actor system: malloc tuning,
  /// the vector pool's limits, the store, the gateway. Fails with
  /// `invalid_config` on an unknown family.
  [[nodiscard]] caf::error init();

  caf::actor_system& system() { return sys_; }
  node_config& config() { return cfg_; }
  serializers::registry& registry() { return *registry_; }
  store::object_store* store() { return store_ ? &*store_ : nullptr; }
  const caf::actor& gateway_handle() const { return gateway_; }

  /// Returns the actor that sends peers the links local actors make with
  /// their actors (link/actor_links.hpp).
  const caf::actor& linker_handle() const { return linker_; }

  /// Returns the node's chunk and import landings.
  const std::shared_ptr<detail::landings>& places() const { return places_; }

  /// Returns which peers this node gave each of its store objects to (the
  /// owner's side of relaying, link/relay_directory.hpp).
  detail::relay_directory& relay_offers() { return relay_offers_; }

  /// Returns the objects this node relays to peers pulling them after it
  /// (link/relay_sources.hpp).
  const std::shared_ptr<relay_sources>& relays() const { return relays_; }

  /// Returns the count of this node's live link objects.
  activity_counter& live_links() { return live_links_; }

  /// Returns what peers sent before this node's side of their link existed.
  early_arrivals& early() { return early_; }

  /// Returns the view of peers and the actors that watch it.
  node_watch& watch() { return watch_; }

  // -- handshakes (node/handshake.cpp) ---------------------------------------

  /// Returns this node's handshake for a link with the config `cfg`, without
  /// its `link_token` (which depends on the peer and its link).
  hello make_hello(const link_config& cfg) const;

  /// Answers a peer's handshake: creates the link (or fails naming both
  /// family lists) with `cfg`, or with the config for the peer's name when
  /// null. The connecting side passes the ring it offered for a same-host
  /// lane in `offered` (see node/handshake.cpp).
  caf::expected<hello> accept(const hello& peer,
                              const link_config* cfg = nullptr,
                              std::optional<lane::ring>* offered = nullptr);

  /// Makes the ring this node offers a peer to receive a same-host lane
  /// through, when `cfg` and the store allow one (logs why not otherwise);
  /// see node/lanes.cpp.
  std::optional<lane::ring> offer_lane(const link_config& cfg);

  /// Connects to `host`:`port` (or returns the existing link); see
  /// node/connect.cpp.
  caf::expected<std::shared_ptr<link_state>>
  connect(const std::string& host, uint16_t port);

  // -- transport (node/transport.cpp) ----------------------------------------

  /// Makes this a TLS node (before `init`); null: a plain node.
  void set_tls(std::shared_ptr<const tls_settings> x);

  /// Returns whether this node links over TLS only.
  bool tls() const { return tls_ != nullptr; }

  /// Publishes `whom` on `port` (TLS or plain, as the node is).
  caf::expected<uint16_t> open_port(const caf::actor& whom, uint16_t port,
                                    const std::string& address);

  /// Returns CAF's proxy of the actor published at `host`:`port` (TLS or
  /// plain, as the node is); says why a TLS handshake failed. Connects
  /// again while CAF closes the new connection at a heartbeat tick before
  /// the peer's handshake (node/transport.cpp), within the handshake
  /// timeout.
  caf::expected<caf::actor> dial(const std::string& host, uint16_t port);

  /// On a TLS node, refuses a peer calling itself `claimed` unless the
  /// verified certificate of its connection at `addr`:`port` names it (and
  /// logs the refusal); on a plain node, accepts.
  caf::error verify_peer(const std::string& addr, uint16_t port,
                         const std::string& claimed) const;

  /// `verify_peer` for the connection CAF holds to `peer`, blocking.
  caf::error check_identity(const caf::node_id& peer,
                            const std::string& claimed);

  /// Asks CAF for the address and port of its connection to `peer` and
  /// calls `then` with them (on a helper actor; never blocks).
  void find_connection(
    const caf::node_id& peer,
    std::function<void(caf::expected<std::pair<std::string, uint16_t>>)> then);

  // -- links ------------------------------------------------------------------

  /// Returns the link to the CAF node `id`, or null.
  std::shared_ptr<link_state> find_link(const caf::node_id& id) const {
    return links_.find(id);
  }

  /// Returns the link to the node named `name`, or null.
  std::shared_ptr<link_state> find_link(const std::string& name) const {
    return links_.find(name);
  }

  std::vector<std::shared_ptr<link_state>> links() const {
    return links_.all();
  }

  // -- exposed actors ---------------------------------------------------------

  void publish_default(const caf::actor& whom) {
    exposed_.publish_default(whom);
  }
  void expose(const std::string& name, const caf::actor& whom) {
    exposed_.expose(name, whom);
  }
  caf::expected<uint64_t> lookup(const std::string& name) const {
    return exposed_.lookup(name);
  }
  caf::strong_actor_ptr exposed(uint64_t id) const {
    return exposed_.find(id);
  }

  /// Spawns the actor type a peer asked for and exports it on the peer's
  /// link; returns its id.
  caf::expected<uint64_t> spawn(spawn_request& req,
                                const caf::strong_actor_ptr& requester);

  // -- metrics ----------------------------------------------------------------

  /// Returns the node's figures in Prometheus' text exposition format.
  std::string metrics_text();

  /// Returns the port of the metrics endpoint (0: none).
  uint16_t metrics_port() const {
    return metrics_ ? metrics_->port() : 0;
  }

  // -- logging ----------------------------------------------------------------

  /// Logs one line (on stderr or to the config's `log_sink`), prefixed with
  /// the node name.
  void log(const std::string& line) const;

  /// Logs that a message came from a node without a link (a CAF peer that
  /// skipped ferry's handshake): at most one line a second.
  void log_unlinked(const std::string& line);

private:
  /// One connection attempt of `dial`, which ends by `deadline`.
  caf::expected<caf::actor>
  dial_once(const std::string& host, uint16_t port,
            std::chrono::steady_clock::time_point deadline);

  /// How a handshake ended: with a link, an error, or the advice to
  /// connect again (CAF lost the connection; this node is the one that
  /// connects again).
  struct handshake_outcome {
    std::shared_ptr<link_state> link;
    caf::error error;
    bool retry = false;
  };

  /// Runs ferry's handshake with the peer whose gateway CAF just gave us
  /// (node/connect.cpp).
  handshake_outcome handshake(const std::string& address,
                              const caf::actor& gateway, bool may_retry);

  /// Hands on (or, without a link, drops) what `peer` sent while this
  /// node's handshake with it was under way.
  void release_early(const caf::node_id& peer);

  /// Returns true if the host store is shared with the peer of `peer`.
  bool shares_store_with(const hello& peer) const;

  /// Checks the families named in the config's link settings.
  caf::error check_families() const;

  /// Attaches to the host store (or logs why the node runs without one).
  void attach_store();

  /// The rings of a new link's same-host lane with `peer`, of a peer that
  /// shares the store (node/lanes.cpp).
  lane_pair join_lane(const hello& peer, const link_config& cfg,
                      std::optional<lane::ring>* offered);

  /// Starts reading `link`'s incoming lane `in`, which the node
  /// `peer_name` (its gateway `peer_gateway`) writes into.
  void read_lane(const std::shared_ptr<link_state>& link,
                 const caf::actor& peer_gateway, const std::string& peer_name,
                 std::shared_ptr<lane::ring> in, const link_config& cfg);

  /// Reads the ring this node offered in a hello for `link`, which a link
  /// the peer made answering that hello writes into (crossed handshakes).
  void keep_offered_lane(const std::shared_ptr<link_state>& link,
                         std::optional<lane::ring>& offered,
                         const caf::actor& peer_gateway,
                         const std::string& peer_name, const link_config& cfg);

  /// Stops logging refused TLS peers (first thing at shutdown).
  void stop_tls_listeners();

  node_config& cfg_;
  // Declared before the actor system: the system reads through them until
  // it has stopped.
  std::shared_ptr<detail::landings> places_;
  read_context_binding binding_;
  activity_counter live_links_;
  /// Made before the actor system starts its threads, which use it (the
  /// relay sweeper, the gateway, the pullers): a thread's start orders what
  /// was made before it, where CAF's own hand-offs between threads are
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
  detail::relay_directory relay_offers_;
  /// Lets relayed objects go after their linger.
  caf::actor relay_sweeper_;
  caf::actor gateway_;
  /// Trims the vector pool while the node runs (null when the pool is off).
  caf::actor janitor_;
  caf::actor linker_;
  std::optional<pool_settings> pool_;
  link_table links_;
  early_arrivals early_;
  node_watch watch_;
  exposed_actors exposed_;
  log_limiter unlinked_logged_{std::chrono::seconds{1}};
  std::shared_ptr<const tls_settings> tls_;
  /// Guards `tls_listeners_`, the keys of this node's TLS refusal loggers.
  std::mutex tls_mtx_;
  std::vector<uint64_t> tls_listeners_;
  /// Last: it reads every member above from its own thread.
  std::unique_ptr<metrics_server> metrics_;
};

} // namespace ferry::detail
