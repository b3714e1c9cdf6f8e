// node_config: ferry's options, their defaults and CAF's defaults that
// ferry changes (see ferry/node_config.hpp).
#include "ferry/node_config.hpp"

#include "ferry/entity.hpp"

#include "node/settings_reader.hpp"
#include "node/spinning_scheduler.hpp"

#include "ferry/errc.hpp"

#include "ferry/serializers/errc.hpp"
#include "ferry/store/errc.hpp"
#include "ferry/store/object_ref.hpp"

#include <caf/atom.hpp>
#include <caf/config_option_adder.hpp>
#include <caf/config_value.hpp>
#include <caf/settings.hpp>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <fstream>

#include <unistd.h>

namespace ferry {

using detail::read_duration;
using detail::read_size;
using detail::read_uint;

// -- node_config --------------------------------------------------------------

namespace {

/// Reads section `ferry.vector-pool` into `out`.
caf::error read_vector_pool(const caf::settings& section,
                            serializers::vector_pool_limits& out) {
  for (auto& [key, value] : section) {
    caf::error err;
    if (key == "min-bytes") {
      err = read_size(value, "ferry.vector-pool.min-bytes", out.min_bytes);
    } else if (key == "max-bytes") {
      err = read_size(value, "ferry.vector-pool.max-bytes", out.max_bytes);
    } else if (key == "max-idle") {
      err = read_duration(value, "ferry.vector-pool.max-idle", out.max_idle);
    } else {
      return caf::make_error(errc::invalid_config,
                             "unknown setting \"ferry.vector-pool." + key +
                               "\": known are min-bytes, max-bytes, "
                               "max-idle");
    }
    if (err)
      return err;
  }
  if (out.max_idle.count() <= 0)
    return caf::make_error(errc::invalid_config,
                           "ferry.vector-pool.max-idle must be positive (turn "
                           "the pool off with max-bytes = 0)");
  return caf::none;
}

std::string read_first_line(const char* path) {
  std::ifstream in{path};
  std::string line;
  std::getline(in, line);
  return line;
}

std::string default_host_id() {
  auto machine = read_first_line("/etc/machine-id");
  auto boot = read_first_line("/proc/sys/kernel/random/boot_id");
  if (machine.empty()) {
    char name[256] = {};
    gethostname(name, sizeof(name) - 1);
    machine = name;
  }
  return machine + "/" + boot;
}

std::string default_node_name() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return std::string{name} + ":" + std::to_string(getpid());
}

// Lets `actor_system::render` print ferry's errors as `ferry::render` does.
void add_category(caf::actor_system_config& cfg, caf::atom_value category) {
  cfg.add_error_category(
    category, [](uint8_t code, caf::atom_value cat, const caf::message& ctx) {
      return render(caf::error{code, cat, ctx});
    });
}

} // namespace

node_config::node_config()
  : registry_(std::make_shared<serializers::registry>()) {
  // CAF's idle scheduler workers poll 500 times with 50 us sleeps before
  // they wait on a condition variable, so a trickle of messages keeps every
  // worker waking 20,000 times a second: a third of a core at 100 round
  // trips a second on the 2-core guest, where each wake-up preempts the
  // threads doing the work. Without the sleeps, idle workers poll briefly
  // and then wait to be notified (docs/architecture.md).
  set("work-stealing.moderate-sleep-duration", caf::timespan{0});
  // A sleeping worker wakes by itself only to look for work to steal from
  // another's queue: ten times a second instead of CAF's hundred, so an
  // idle node's four workers cost it next to nothing. Work from outside
  // the scheduler wakes a worker at once, and a worker that just ran a job
  // steals while it spins (below).
  set("work-stealing.relaxed-sleep-duration",
      caf::timespan{std::chrono::milliseconds{100}});
  // A worker that ran a job looks for the next one for a while before it
  // sleeps (node/spinning_scheduler.hpp, ferry.scheduler.spin).
  detail::install_spinning_scheduler(*this);
  add_category(*this, caf::atom("ferry_fw"));
  add_category(*this, caf::atom("ferry_ser"));
  add_category(*this, caf::atom("ferry_sto"));
  // A store handle that cannot be written or read inside a value throws;
  // the registry hands back the store's own error (code and text).
  registry_->register_error_exception<store::ref_serialization_error>();
  opt_group{custom_options_, "ferry"}
    .add(node_name, "node-name", "name of this node in its peers' link tables")
    .add(host_id, "host-id",
         "identity of this host (nodes with equal host ids share the store)")
    .add_neg(tune_malloc, "keep-malloc-defaults",
             "leave glibc malloc's thresholds alone (default: raise them so "
             "large decoded buffers reuse faulted-in memory)");
  opt_group{custom_options_, "ferry.vector-pool"}
    .add<std::string>("min-bytes",
                      "smallest decoded vector kept for reuse (default 1MiB)")
    .add<std::string>("max-bytes",
                      "most bytes of decoded vectors kept for reuse (0: none)")
    .add<caf::timespan>(
      "max-idle", "a kept vector unused this long is freed (default 10s)");
  opt_group{custom_options_, "ferry.store"}
    .add_neg(store_enabled, "disabled",
             "run without the host store (large frames go inline or pulled)")
    .add(store_name, "name", "name of the host store (default ferry-<uid>)")
    .add<std::string>("capacity", "size of the store when created here "
                                  "(e.g. 256MiB)")
    .add(store_prefault, "prefault",
         "fault the whole store in at attach (slower start, the whole "
         "capacity resident; default: pages as objects need them)")
    .add(store_persistent, "persistent",
         "keep the store after its last process exits (default: the last "
         "process removes it)")
    .add(store_spill_directory, "spill-directory",
         "directory for spilled objects (default: $TMPDIR/ferry-spill-<uid>)")
    .add_neg(allow_out_of_band_ref_serialization, "strict-refs",
             "refuse handles serialized outside ferry's message path "
             "(default: pin them with a warning)");
  opt_group{custom_options_, "ferry.metrics"}
    .add<size_t>("port", "port of the Prometheus endpoint (0: any free "
                         "port; unset: no endpoint)")
    .add(metrics_address, "address",
         "address the Prometheus endpoint listens on (default 127.0.0.1)")
    .add(metrics_token, "token",
         "token that turns on the dashboard's operator actions (unset: "
         "read-only)")
    .add(dashboard_files, "dashboard-files",
         "directory of the dashboard's page (default: the installed one)")
    .add(chart_js, "chart-js",
         "path of Chart.js (default: Debian's libjs-chart.js)");
  opt_group{custom_options_, "ferry.scheduler"}.add<caf::timespan>(
    "spin", "a scheduler worker looks for work this long "
            "after a job before it sleeps (default "
            "200us, 0: at once)");
  opt_group{custom_options_, "ferry.transport"}
    .add<size_t>("io-threads", "threads that run the node's connections "
                               "(default 1)")
    .add<caf::timespan>("io-spin",
                        "an I/O thread polls this long after work before it "
                        "sleeps (default 200us, 0: at once)")
    .add<caf::timespan>("handshake-timeout",
                        "a new connection's handshake must end within this "
                        "(default 10s)");
  opt_group{custom_options_, "ferry.cluster"}
    .add(cluster.name, "name", "the cluster to join (unset: none)")
    .add(cluster.address, "address",
         "host:port where this node listens and members reach it")
    .add<std::vector<std::string>>("seeds",
                                   "host:port of the nodes to join through")
    .add<caf::timespan>("seed-timeout", "the first seed forms the cluster "
                                        "when no other seed answered within "
                                        "this (default 5s)")
    .add<caf::timespan>("gossip-interval", "default 1s")
    .add<caf::timespan>("heartbeat-interval", "default 1s")
    .add<double>("phi-threshold", "phi at which a watched member is "
                                  "unreachable (default 8)")
    .add<caf::timespan>("acceptable-pause", "a heartbeat pause that costs no "
                                            "phi (default 3s)")
    .add<size_t>("monitored-by", "members that watch each member (default 5)")
    .add(cluster.downing, "downing",
         "none, keep-majority (default) or keep-oldest")
    .add<caf::timespan>("stable-after", "unreachable members are downed "
                                        "after this (default 10s)");
  opt_group{custom_options_, "ferry.entities"}
    .add(entities.store, "store",
         "the entities' database: sqlite:PATH or postgresql:CONNINFO")
    .add<size_t>("shards", "shards keys map to (default 100)")
    .add<caf::timespan>("passivate-after",
                        "an idle entity stops after this (default 2min)")
    .add<caf::timespan>("lease", "a shard's lease lasts this long unless "
                                 "renewed (default 10s)")
    .add<caf::timespan>("hand-off-timeout",
                        "how long a hand-off may take (default 10s)")
    .add<size_t>("max-buffered", "messages held per moving shard "
                                 "(default 10000)")
    .add<size_t>("max-moves", "shards handed off at once (default 4)")
    .add<size_t>("max-key-bytes", "longest entity key (default 256)")
    .add<size_t>("store-connections",
                 "database connections per node (default 4)");
  opt_group{custom_options_, "ferry.tls"}
    .add(tls_certificate, "certificate",
         "PEM certificate (chain) of this node; turns TLS on for every link "
         "not configured plain")
    .add(tls_key, "key", "PEM private key of ferry.tls.certificate")
    .add(tls_ca_file, "ca-file",
         "PEM file of the CAs that sign peers' "
         "certificates")
    .add(tls_passphrase, "passphrase",
         "passphrase of an encrypted "
         "ferry.tls.key");
  opt_group{custom_options_, "ferry.link"}
    .add(default_link.serializers, "serializers",
         "families to send with, in preference order")
    .add(default_link.deserializers, "deserializers",
         "families accepted on receipt")
    .add<std::string>("spill-threshold",
                      "frames of at least this size go by store or in chunks")
    .add<std::string>("compression", "none, lz4 or zstd for inline frames")
    .add<std::string>("compression-threshold",
                      "smallest inline frame that gets compressed")
    .add<std::string>("max-message-size", "largest message a link carries")
    .add<std::string>("window-bytes", "credit window: bytes in flight per link")
    .add(default_link.window_messages, "window-messages",
         "credit window: messages in flight per link")
    .add<std::string>("pull-threshold",
                      "frames at least this large are pulled in chunks "
                      "across hosts")
    .add<std::string>("chunk-size",
                      "chunk size for cross-host transfers of large frames")
    .add<size_t>("chunks-in-flight", "chunks requested at once per frame")
    .add<caf::timespan>("send-timeout",
                        "how long a sender waits for credit (e.g. 30s)")
    .add<size_t>("batch-messages",
                 "most small messages of a burst sent as one (1: no batching)")
    .add<caf::timespan>("batch-gap",
                        "a message this close behind the previous one joins "
                        "a batch (e.g. 20us)")
    .add_neg(default_link.lane, "no-lane",
             "send through the TCP connection between nodes of one host too "
             "(default: through a same-host lane; file key: lane = false)")
    .add<std::string>("lane-bytes",
                      "size of the ring a same-host lane is received through "
                      "(default 8MiB)")
    .add<caf::timespan>("lane-spin",
                        "how long a same-host lane's reader polls before it "
                        "sleeps (default 200us; 0s: at once)")
    .add(default_link.max_proxies, "max-proxies",
         "most proxies of a peer's actors that sent to this node")
    .add(default_link.max_pending_requests, "max-pending-requests",
         "most requests of this node's actors a link keeps waiting for "
         "answers")
    .add(default_link.max_spawned_actors, "max-spawned-actors",
         "most live actors a peer may spawn on this node (0: none)")
    .add<std::string>("max-held-bytes",
                      "most bytes of a peer's messages held here before "
                      "actors process them")
    .add(default_link.max_held_messages, "max-held-messages",
         "most messages of a peer held here before actors process them")
    .add<caf::timespan>("heartbeat-interval",
                        "a link sends a heartbeat when it sent nothing for "
                        "this long (default 5s)")
    .add<caf::timespan>("connection-timeout",
                        "a link goes down when nothing arrived for this long "
                        "(default 30s)")
    .add(default_link.plain, "plain",
         "on a TLS node: links may be plain (TCP without TLS)");
  add_message_type<std::string>("string")
    .add_message_type<bool>("bool")
    .add_message_type<int32_t>("i32")
    .add_message_type<int64_t>("i64")
    .add_message_type<uint32_t>("u32")
    .add_message_type<uint64_t>("u64")
    .add_message_type<float>("f32")
    .add_message_type<double>("f64")
    .add_message_type<caf::atom_value>("atom")
    .add_message_type<std::vector<std::byte>>("bytes")
    .add_message_type<std::vector<char>>("chars")
    .add_message_type<caf::actor>("actor")
    .add_message_type<caf::actor_addr>("actor_addr")
    .add_message_type<caf::strong_actor_ptr>("actor_ptr");
}

node_config::~node_config() = default;

void node_config::add_entity_type_impl(
  std::shared_ptr<const detail::entity_type> x) {
  for (auto& t : entity_types_)
    if (t->name == x->name) {
      t = std::move(x);
      return;
    }
  entity_types_.push_back(std::move(x));
}

node_config& node_config::link(std::string peer, link_config cfg) {
  links.insert_or_assign(std::move(peer), std::move(cfg));
  return *this;
}

const link_config& node_config::link_for(const std::string& peer) const {
  auto i = links.find(peer);
  return i != links.end() ? i->second : default_link;
}

namespace {

// Reads section ferry.entities from `content` (see entities_config.hpp).
caf::error read_entities(const caf::settings& content, entities_config& out) {
  using detail::read_duration;
  using detail::read_uint;
  if (auto x = caf::get_if<std::string>(&content, "ferry.entities.store"))
    out.store = *x;
  auto duration = [&](const char* key, std::chrono::milliseconds& dst) {
    if (auto x = caf::get_if(&content, std::string{key}))
      return read_duration(*x, key, dst);
    return caf::error{};
  };
  auto count = [&](const char* key, auto& dst) -> caf::error {
    if (auto x = caf::get_if(&content, std::string{key})) {
      uint64_t n = 0;
      if (auto err = read_uint(*x, key, n))
        return err;
      dst = static_cast<std::remove_reference_t<decltype(dst)>>(n);
    }
    return caf::error{};
  };
  if (auto err = count("ferry.entities.shards", out.shards))
    return err;
  if (auto err =
        duration("ferry.entities.passivate-after", out.passivate_after))
    return err;
  if (auto err = duration("ferry.entities.lease", out.lease))
    return err;
  if (auto err =
        duration("ferry.entities.hand-off-timeout", out.hand_off_timeout))
    return err;
  if (auto err = count("ferry.entities.max-buffered", out.max_buffered))
    return err;
  if (auto err = count("ferry.entities.max-moves", out.max_moves))
    return err;
  if (auto err = count("ferry.entities.max-key-bytes", out.max_key_bytes))
    return err;
  if (auto err =
        count("ferry.entities.store-connections", out.store_connections))
    return err;
  return caf::error{};
}

// Reads section ferry.cluster from `content` (see cluster_config.hpp).
caf::error read_cluster(const caf::settings& content, cluster_config& out) {
  using detail::read_duration;
  if (auto x = caf::get_if<std::string>(&content, "ferry.cluster.name"))
    out.name = *x;
  if (auto x = caf::get_if<std::string>(&content, "ferry.cluster.address"))
    out.address = *x;
  if (auto x = caf::get_if(&content, "ferry.cluster.seeds"))
    if (auto err = detail::read_strings(*x, "ferry.cluster.seeds", out.seeds,
                                        "[\"10.0.0.1:4000\"]"))
      return err;
  auto duration = [&](const char* key, std::chrono::milliseconds& dst) {
    if (auto x = caf::get_if(&content, std::string{key}))
      return read_duration(*x, key, dst);
    return caf::error{};
  };
  if (auto err = duration("ferry.cluster.seed-timeout", out.seed_timeout))
    return err;
  if (auto err = duration("ferry.cluster.gossip-interval", out.gossip_interval))
    return err;
  if (auto err =
        duration("ferry.cluster.heartbeat-interval", out.heartbeat_interval))
    return err;
  if (auto err =
        duration("ferry.cluster.acceptable-pause", out.acceptable_pause))
    return err;
  if (auto err = duration("ferry.cluster.stable-after", out.stable_after))
    return err;
  if (auto x = caf::get_if(&content, "ferry.cluster.phi-threshold")) {
    if (auto d = caf::get_if<double>(x))
      out.phi_threshold = *d;
    else if (auto i = caf::get_if<int64_t>(x))
      out.phi_threshold = static_cast<double>(*i);
    else
      return detail::bad_value("ferry.cluster.phi-threshold", "a number");
    if (!(out.phi_threshold > 0))
      return detail::bad_value("ferry.cluster.phi-threshold",
                               "a number above 0");
  }
  if (auto x = caf::get_if(&content, "ferry.cluster.monitored-by")) {
    uint64_t n = 0;
    if (auto err = detail::read_uint(*x, "ferry.cluster.monitored-by", n))
      return err;
    if (n < 1 || n > 64)
      return detail::bad_value("ferry.cluster.monitored-by",
                               "a count from 1 to 64");
    out.monitored_by = static_cast<size_t>(n);
  }
  if (auto x = caf::get_if<std::string>(&content, "ferry.cluster.downing"))
    out.downing = *x;
  return caf::none;
}

} // namespace

caf::error node_config::finalize() {
  // CAF 0.17 keeps values of nested sections ([ferry.store], [ferry.link])
  // from the config file in `content` without storing them into the bound
  // variables (flags it does store); `content` holds the merged result, so
  // read those sections from there.
  if (auto x = caf::get_if<std::string>(&content, "ferry.node-name"))
    node_name = *x;
  if (auto x = caf::get_if<std::string>(&content, "ferry.host-id"))
    host_id = *x;
  if (auto x = caf::get_if<bool>(&content, "ferry.keep-malloc-defaults"))
    tune_malloc = !*x;
  if (auto section = caf::get_if<caf::settings>(&content, "ferry.vector-pool"))
    if (auto err = read_vector_pool(*section, vector_pool))
      return err;
  if (auto x = caf::get_if<bool>(&content, "ferry.store.disabled"))
    store_enabled = !*x;
  if (auto x = caf::get_if<std::string>(&content, "ferry.store.name"))
    store_name = *x;
  if (auto x = caf::get_if(&content, "ferry.store.capacity"))
    if (auto err = read_size(*x, "ferry.store.capacity", store_capacity))
      return err;
  if (auto x =
        caf::get_if<std::string>(&content, "ferry.store.spill-directory"))
    store_spill_directory = *x;
  if (auto x = caf::get_if<bool>(&content, "ferry.store.prefault"))
    store_prefault = *x;
  if (auto x = caf::get_if<bool>(&content, "ferry.store.persistent"))
    store_persistent = *x;
  if (auto x = caf::get_if<bool>(&content, "ferry.store.strict-refs"))
    allow_out_of_band_ref_serialization = !*x;
  if (auto x = caf::get_if(&content, "ferry.metrics.port")) {
    uint64_t port = 0;
    if (auto err = read_uint(*x, "ferry.metrics.port", port))
      return err;
    if (port > 65535)
      return detail::bad_value("ferry.metrics.port", "a port (0 to 65535)");
    metrics_port = static_cast<uint16_t>(port);
  }
  if (auto x = caf::get_if<std::string>(&content, "ferry.metrics.address"))
    metrics_address = *x;
  if (auto x = caf::get_if<std::string>(&content, "ferry.metrics.token"))
    metrics_token = *x;
  if (auto x =
        caf::get_if<std::string>(&content, "ferry.metrics.dashboard-files"))
    dashboard_files = *x;
  if (auto x = caf::get_if<std::string>(&content, "ferry.metrics.chart-js"))
    chart_js = *x;
  if (auto x = caf::get_if(&content, "ferry.transport.io-threads")) {
    uint64_t n = 0;
    if (auto err = read_uint(*x, "ferry.transport.io-threads", n))
      return err;
    if (n < 1 || n > 64)
      return detail::bad_value("ferry.transport.io-threads",
                               "a count of threads from 1 to 64");
    io_threads = static_cast<size_t>(n);
  }
  if (auto x = caf::get_if(&content, "ferry.transport.io-spin"))
    if (auto err = read_duration(*x, "ferry.transport.io-spin", io_spin))
      return err;
  if (io_spin.count() < 0 || io_spin > std::chrono::milliseconds{10})
    return detail::bad_value("ferry.transport.io-spin",
                             "a duration from 0 to 10ms");
  if (auto x = caf::get_if(&content, "ferry.scheduler.spin"))
    if (auto err = read_duration(*x, "ferry.scheduler.spin", scheduler_spin))
      return err;
  if (scheduler_spin.count() < 0 ||
      scheduler_spin > std::chrono::milliseconds{10})
    return detail::bad_value("ferry.scheduler.spin",
                             "a duration from 0 to 10ms");
  if (auto x = caf::get_if(&content, "ferry.transport.handshake-timeout"))
    if (auto err = read_duration(*x, "ferry.transport.handshake-timeout",
                                 handshake_timeout))
      return err;
  if (handshake_timeout.count() <= 0)
    return detail::bad_value("ferry.transport.handshake-timeout",
                             "a positive duration");
  if (auto err = read_cluster(content, cluster))
    return err;
  if (auto err = read_entities(content, entities))
    return err;
  for (auto [key, out] : {std::pair{"ferry.tls.certificate", &tls_certificate},
                          {"ferry.tls.key", &tls_key},
                          {"ferry.tls.ca-file", &tls_ca_file},
                          {"ferry.tls.passphrase", &tls_passphrase}})
    if (auto x = caf::get_if<std::string>(
          &content, caf::string_view{key, std::strlen(key)}))
      *out = *x;
  if (auto section = caf::get_if<caf::settings>(&content, "ferry.link")) {
    auto merged = link_config::from_settings(*section, default_link);
    if (!merged)
      return caf::make_error(errc::invalid_config,
                             "in ferry.link: " + render(merged.error()));
    default_link = std::move(*merged);
  }
  if (node_name.empty())
    node_name = default_node_name();
  if (host_id.empty())
    host_id = default_host_id();
  if (store_name.empty())
    store_name = "ferry-" + std::to_string(getuid());
  auto validated = link_config::from_settings({}, default_link);
  if (!validated)
    return std::move(validated.error());
  if (auto sections = caf::get_if<caf::settings>(&content, "ferry.links")) {
    for (auto& [peer, value] : *sections) {
      auto section = caf::get_if<caf::settings>(&value);
      if (section == nullptr)
        return caf::make_error(errc::invalid_config,
                               "ferry.links." + peer +
                                 " must be a section of link settings");
      if (links.count(peer) != 0)
        continue; // Set in code: takes precedence over the file.
      auto cfg = link_config::from_settings(*section, default_link);
      if (!cfg)
        return caf::make_error(errc::invalid_config, "in ferry.links." + peer +
                                                       ": " +
                                                       render(cfg.error()));
      links.emplace(peer, std::move(*cfg));
    }
  }
  // Links set in code (node_config::link) get the same checks as the file's.
  for (auto& [peer, cfg] : links)
    if (auto checked = link_config::from_settings({}, cfg); !checked)
      return caf::make_error(errc::invalid_config,
                             "in the link config for peer \"" + peer +
                               "\": " + render(checked.error()));
  return caf::none;
}

} // namespace ferry
