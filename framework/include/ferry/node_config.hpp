// Configuration of a ferry node: CAF's actor_system_config plus ferry's own
// options, message types and per-link settings.
//
// A `node_config` is a `caf::actor_system_config`: it reads
// `caf-application.ini` (or `--config-file=`) and command-line flags. ferry's
// options live under `ferry.` (every one in docs/configuration.md):
//
//     [ferry]
//     node-name = "node-a"          # --ferry.node-name=node-a
//     [ferry.store]
//     disabled = false              # --ferry.store.disabled
//     [ferry.link]                  # the default for every link
//     serializers = ["cereal.binary", "caf"]
//     [ferry.links]                 # per peer, by node name
//     node-b = { serializers = ["cereal.portable"] }
//     node-c = { serializers = ["msgpack"], spill-threshold = 1048576 }
//
// (Write per-peer settings as entries of one [ferry.links] section: CAF
// 0.17's INI reader keeps only the last of several [ferry.links.<peer>]
// sections.)
//
// CAF's own options keep their meaning, with one default changed:
// `work-stealing.moderate-sleep-duration` is 0: an idle scheduler worker
// polls briefly and then waits to be woken, instead of waking every 50 us
// for its next 500 polls (set `50us` for CAF's). Links between nodes are
// ferry's own (TCP connections on Boost.Asio, TLS on OpenSSL, same-host
// lanes); CAF's middleman is not loaded.
//
// Usage:
//
//     ferry::node_config cfg;
//     cfg.add_message_type<order>("order");      // in every process, same name
//     if (auto err = cfg.parse(argc, argv)) ...
//     auto n = ferry::node::start(cfg);          // expected<unique_ptr<node>>
//
// Message types are registered before the node is built, in every process that
// sends or receives them, under the same name; the registry is their one
// record. The config is not thread-safe; it is read once when the node
// starts, and it serves one running node at a time (it must outlive it).
#pragma once

#include "ferry/clock.hpp"
#include "ferry/cluster_config.hpp"
#include "ferry/detail/store_msgpack.hpp"
#include "ferry/entities_config.hpp"
#include "ferry/fwd.hpp"
#include "ferry/link_config.hpp"

#include "ferry/serializers/registry.hpp"
#include "ferry/serializers/vector_pool.hpp"

#include <caf/actor_system_config.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ferry {

namespace detail {
class node_impl;
struct entity_type;
} // namespace detail

class node_config : public caf::actor_system_config {
public:
  node_config();

  ~node_config() override;

  /// Registers `T` as a message type under `name`, for every family that can
  /// encode it. Call in every process that sends or receives `T`, with the
  /// same name. Registering the same type twice under one name is harmless.
  template <class T>
  node_config& add_message_type(std::string name) {
    registry_->add_type<T>(std::move(name));
    return *this;
  }

  /// Registers the entity type `name`: each activation of an entity of that
  /// type runs `behavior`, a `caf::behavior (ferry::entity<State>*)`, with
  /// its `State` loaded from the entities' database and written by
  /// `family`, one of ferry's built-in families (docs/entities.md). Register
  /// it on every member that may host it. Defined in ferry/entity.hpp.
  template <class State, class F>
  node_config& add_entity_type(std::string name, F behavior,
                               std::string family = "cereal.binary");

  /// Sets the config of the link to the node named `peer`, replacing what the
  /// config file said about it.
  node_config& link(std::string peer, link_config cfg);

  /// Returns the registry shared by this config and the node built from it.
  serializers::registry& registry() { return *registry_; }

  // -- options (filled by parse(); defaults work without configuration) ------

  /// Name of this node in its peers' link tables (default: hostname:pid).
  std::string node_name;

  /// Identity of this host; nodes with equal host ids and store names share
  /// the store (default: /etc/machine-id and the boot id).
  std::string host_id;

  /// Attach to (or create) the host's shared object store
  /// (`ferry.store.disabled` turns it off).
  bool store_enabled = true;

  /// Name of the host store (default "ferry-<uid>").
  std::string store_name;

  /// Capacity of the host store when this node creates it (default 2 GiB).
  /// A bound, not a cost: the store takes memory as objects are written.
  uint64_t store_capacity = uint64_t{2} << 30;

  /// Whether attaching the store faults all of its memory in (the creator
  /// allocates every page, each process maps them), so that the first puts
  /// already run at warm-memcpy speed and a /dev/shm too small for the
  /// capacity fails at start; costs about 1 s per GiB at start and keeps the
  /// whole capacity resident (`ferry.store.prefault`, default off: pages
  /// are allocated as objects need them and kept for reuse).
  bool store_prefault = false;

  /// Whether the store stays in /dev/shm after the last process using it
  /// exits (`ferry.store.persistent`; default off: the last process to
  /// leave removes it). Set by the node that creates the store.
  bool store_persistent = false;

  /// Directory for spilled store objects (empty: the store's default,
  /// `$TMPDIR/ferry-spill-<uid>`).
  std::string store_spill_directory;

  /// Whether a store handle may be serialized outside ferry's message path
  /// (then it is pinned until its process exits, with a warning);
  /// `ferry.store.strict-refs` makes that an error instead.
  bool allow_out_of_band_ref_serialization = true;

  /// Whether the node may raise glibc malloc's mmap and trim thresholds (to
  /// 32 MiB and 256 MiB, process-wide, once) so that decoded buffers up to
  /// 32 MiB reuse memory already faulted in instead of fresh pages;
  /// `ferry.keep-malloc-defaults` leaves malloc alone. Skipped when the
  /// environment tunes malloc itself (GLIBC_TUNABLES, MALLOC_*_).
  bool tune_malloc = true;

  /// Limits of the process-wide vector pool (serializers/vector_pool.hpp),
  /// set when this node starts: large decoded `std::vector`s of numbers or
  /// bytes go back to it when their message is gone, so the next one reuses
  /// memory already faulted in (section `ferry.vector-pool`: `min-bytes`,
  /// `max-bytes`, 0 turns the pool off, `max-idle`). One pool serves the
  /// whole process: a node whose limits differ from those a running node set
  /// logs a warning naming that node, then applies its own.
  serializers::vector_pool_limits vector_pool;

  /// Port of the node's Prometheus endpoint (`ferry.metrics.port`; 0: any
  /// free port, see `node::metrics_port`); unset: no endpoint
  /// (docs/monitoring.md).
  std::optional<uint16_t> metrics_port;

  /// Address the Prometheus endpoint listens on (`ferry.metrics.address`).
  std::string metrics_address = "127.0.0.1";

  /// Token that turns on the dashboard's operator actions (down a member,
  /// ask one to leave) for requests that carry it as `Authorization: Bearer
  /// <token>` (`ferry.metrics.token`); empty: the endpoint is read-only.
  std::string metrics_token;

  /// Directory of the dashboard's page (`ferry.metrics.dashboard-files`);
  /// empty: the installed one (share/ferry/dashboard), or the source tree's
  /// in a build tree.
  std::string dashboard_files;

  /// Chart.js, which the page draws with (`ferry.metrics.chart-js`; Debian's
  /// libjs-chart.js installs it here).
  std::string chart_js = "/usr/share/javascript/chart.js/chart.min.js";

  /// Threads that run the node's connections (`ferry.transport.io-threads`,
  /// default 1): each connection reads, writes and keeps time on one of
  /// them, and a received message goes from there into its actor's
  /// mailbox.
  size_t io_threads = 1;

  /// How long an I/O thread keeps polling its connections after it handled
  /// something, yielding its core between looks, before it sleeps in the
  /// kernel (`ferry.transport.io-spin`, at most 10 ms): the answer to a
  /// request just sent, or the next message of a stream, that arrives
  /// within it costs no wake-up. An idle node does not spin. 0: sleep at
  /// once.
  std::chrono::microseconds io_spin{200};

  /// How long a worker of CAF's scheduler keeps looking for the next job
  /// after it ran one, yielding its core between looks, before it sleeps
  /// (`ferry.scheduler.spin`, at most 10 ms): a message for an idle actor
  /// that arrives within it is taken by that worker without a wake-up. Used
  /// with CAF's default `scheduler.policy`, `stealing`. 0: sleep at once.
  std::chrono::microseconds scheduler_spin{200};

  /// How long a new connection may take to finish ferry's handshake, TLS
  /// included (`ferry.transport.handshake-timeout`, default 10 s); a peer
  /// that connects and says nothing is dropped after it.
  std::chrono::milliseconds handshake_timeout{10000};

  /// The cluster this node joins (section `ferry.cluster`; none unless
  /// `cluster.name` is set). See ferry/cluster_config.hpp and
  /// docs/cluster.md.
  cluster_config cluster;

  /// How the node hosts sharded entities (section `ferry.entities`; see
  /// ferry/entities_config.hpp and docs/entities.md).
  entities_config entities;

  /// Link settings for peers not named in `links` (section `ferry.link`).
  link_config default_link;

  /// Link settings per peer node name (entries of section `ferry.links`).
  std::map<std::string, link_config> links;

  // -- TLS (section ferry.tls; docs/security.md) ------------------------------

  /// PEM file with this node's certificate (and its chain); its subject CN
  /// or a DNS name of its subjectAltName must be the node's name
  /// (`ferry.tls.certificate`). Setting any `tls_*` option makes every link
  /// of the node a TLS link with mutual authentication, except the links
  /// whose config says `plain`; then certificate, key and CA file are all
  /// required.
  std::string tls_certificate;

  /// PEM file with the private key of `tls_certificate` (`ferry.tls.key`).
  std::string tls_key;

  /// PEM file with the certificates of the CAs that sign the certificates
  /// of this node's peers (`ferry.tls.ca-file`).
  std::string tls_ca_file;

  /// Passphrase of an encrypted `tls_key` (`ferry.tls.passphrase`); ferry
  /// never prompts for one.
  std::string tls_passphrase;

  /// Returns whether any `tls_*` option is set (the node is a TLS node, or
  /// refuses to start naming what is missing).
  bool tls_enabled() const {
    return !tls_certificate.empty() || !tls_key.empty() ||
           !tls_ca_file.empty() || !tls_passphrase.empty();
  }

  /// Where the node writes its warnings and the refusals it sees, one line
  /// each (`ferry[<node name>]: ...`, no newline); empty: standard error.
  /// Called from any thread, also several at once; code only, no option.
  /// Lines about refused or unsendable one-way messages are written at most
  /// once a second per link and kind, the next line counting those left
  /// out (`link_stats` counts every one).
  std::function<void(const std::string&)> log_sink;

  /// The clock every timeout, heartbeat, batch gap, rate limit and the
  /// cluster's failure detection read (ferry/clock.hpp); empty: the
  /// process's steady clock. Tests give a `ferry::manual_clock` and move
  /// time instead of waiting. Code only, no option.
  std::shared_ptr<const ferry::clock> clock;

  // -- checking -------------------------------------------------------------

  /// Reads the `ferry.links` entries parsed so far into `links`, fills in
  /// the defaults that depend on other options and checks every option;
  /// returns the error `node::start` would refuse this config with (naming
  /// the option and how to fix it), or none. `node::start` calls it.
  [[nodiscard]] caf::error finalize();

  /// Returns the config for the link to `peer` (named config or default).
  const link_config& link_for(const std::string& peer) const;

private:
  friend class node;
  friend class entities;
  friend class detail::node_impl;

  /// The registry as a shared pointer, for the node built from this config.
  std::shared_ptr<serializers::registry> shared_registry() const {
    return registry_;
  }

  /// Records an entity type (`add_entity_type`).
  void add_entity_type_impl(std::shared_ptr<const detail::entity_type> x);

  std::shared_ptr<serializers::registry> registry_;
  /// The entity types registered, in order.
  std::vector<std::shared_ptr<const detail::entity_type>> entity_types_;
  /// Whether a running node uses this config.
  std::atomic<bool> in_use_{false};
};

} // namespace ferry
