// entities: the public face of a node's sharded entities (see
// ferry/entities.hpp); the work is the host's (entities/host.hpp), the
// router's (entities/router.hpp) and the store workers'.
#include "ferry/entities.hpp"

#include "entities/entity_ref.hpp"
#include "entities/host.hpp"
#include "entities/lazy_store.hpp"
#include "entities/protocol.hpp"
#include "entities/shard_map.hpp"
#include "entities/store_worker.hpp"
#include "member_host.hpp"

#include "ferry/cluster.hpp"
#include "ferry/entity.hpp"
#include "ferry/errc.hpp"
#include "ferry/node_config.hpp"

#include <caf/actor_cast.hpp>
#include <caf/make_actor.hpp>
#include <caf/scoped_actor.hpp>

#include <sstream>

namespace ferry {

using namespace detail::entities;

struct entities::impl {
  caf::actor_system* sys = nullptr;
  entities_config cfg;
  std::shared_ptr<router> routes;
  caf::actor host;
  std::vector<caf::actor> workers;
  std::shared_ptr<store_figures> store_counts =
    std::make_shared<store_figures>();
};

namespace {

/// The routes until the host publishes its own: every shard to this node's
/// host (which holds them all without a cluster, and holds calls until it
/// knows the owners with one).
void first_routes(router& r, uint64_t uid, const caf::actor& host,
                  uint32_t shards, bool owns_all) {
  auto x = std::make_shared<routes>();
  x->self = uid;
  x->self_host = host;
  x->owner.assign(shards, owns_all ? uid : 0);
  x->hosts[uid] = host;
  r.set_routes(std::move(x));
}

caf::error bad(const std::string& key, const std::string& what) {
  return caf::make_error(errc::invalid_config,
                         "ferry.entities." + key + " " + what);
}

/// Checks `cfg` (a node that hosts entities).
caf::error check(const entities_config& cfg) {
  if (cfg.store.empty())
    return bad("store",
               "is not set: a node that registers entity types needs the "
               "database its entities keep their state in "
               "(\"sqlite:PATH\" for the members of one host, "
               "\"postgresql:CONNINFO\" across hosts)");
  if (cfg.shards == 0)
    return bad("shards", "must be positive");
  if (cfg.lease < std::chrono::milliseconds{300})
    return bad("lease", "must be at least 300ms (a member renews its leases "
                        "every third of it)");
  if (cfg.passivate_after.count() <= 0 || cfg.hand_off_timeout.count() <= 0)
    return bad("passivate-after and hand-off-timeout", "must be positive");
  if (cfg.max_buffered == 0 || cfg.max_moves == 0)
    return bad("max-buffered and max-moves", "must be positive");
  if (cfg.max_key_bytes == 0 || cfg.max_key_bytes > 1024)
    return bad("max-key-bytes", "must be 1 to 1024");
  if (cfg.store_connections == 0 || cfg.store_connections > 1023)
    return bad("store-connections", "must be 1 to 1023");
  return caf::none;
}

} // namespace

caf::expected<std::unique_ptr<entities>>
entities::start(detail::member_host& host, ferry::cluster& c,
                node_config& cfg) {
  auto x = std::make_unique<impl>();
  x->sys = &host.system();
  x->cfg = cfg.entities;
  auto hosting = !cfg.entity_types_.empty();
  if (x->cfg.shards == 0)
    return bad("shards", "must be positive");
  x->routes = std::make_shared<router>(x->cfg.shards, x->cfg.max_buffered,
                                       host.time(), x->cfg.hand_off_timeout);
  if (!hosting) {
    // A node that hosts none still reaches entities: through the hosts of
    // the members it meets, or, joining no cluster, nowhere.
    if (c.joined()) {
      host_settings s;
      s.cfg = x->cfg;
      s.cfg.shards = std::max<uint32_t>(x->cfg.shards, 1);
      s.node_name = host.node_name();
      s.uid = host.node_id();
      s.registry = &cfg.registry();
      s.routes = x->routes;
      s.cluster = &c;
      s.time = &host.time();
      s.log = [&host](const std::string& line) {
        host.log(line);
      };
      s.observer = true;
      x->host = spawn_host(host.system(), std::move(s));
      first_routes(*x->routes, host.node_id(), x->host, x->cfg.shards, false);
    }
    return std::unique_ptr<entities>{new entities(std::move(x))};
  }
  if (auto err = check(x->cfg))
    return err;
  if (c.joined() && x->cfg.lease > cfg.cluster.stable_after) {
    std::ostringstream what;
    what << "(" << x->cfg.lease.count()
         << "ms) must not exceed ferry.cluster.stable-after ("
         << cfg.cluster.stable_after.count()
         << "ms): a member killed must lose its leases before the others "
            "down it, or its shards wait for the lease";
    return bad("lease", what.str());
  }
  state_store_config store_cfg;
  store_cfg.location = x->cfg.store;
  // One connection more than the data workers: the lease worker's.
  store_cfg.pool_size = x->cfg.store_connections + 1;
  auto store = std::make_shared<lazy_store>(store_cfg);
  if (auto err = store->last_error()) {
    if (err == errc::invalid_config)
      return err;
    host.log("warning: the entities' database is not reachable yet (calls "
             "fail until it is): " +
             render(err));
  }
  for (uint32_t i = 0; i <= x->cfg.store_connections; ++i)
    x->workers.push_back(
      spawn_store_worker(host.system(), store, x->store_counts));
  host_settings s;
  s.cfg = x->cfg;
  s.node_name = host.node_name();
  s.uid = host.node_id();
  s.registry = &cfg.registry();
  for (auto& t : cfg.entity_types_)
    s.types.emplace(t->name, t);
  s.lease_worker = x->workers.front();
  s.workers.assign(x->workers.begin() + 1, x->workers.end());
  s.routes = x->routes;
  s.cluster = &c;
  s.time = &host.time();
  s.log = [&host](const std::string& line) {
    host.log(line);
  };
  x->host = spawn_host(host.system(), std::move(s));
  first_routes(*x->routes, host.node_id(), x->host, x->cfg.shards, !c.joined());
  return std::unique_ptr<entities>{new entities(std::move(x))};
}

entities::entities(std::unique_ptr<impl> x) : impl_(std::move(x)) {
  // nop
}

entities::~entities() {
  if (impl_->host) {
    // Entities save what changed and leases go, so that the shards move
    // at once; bounded, for a database that does not answer.
    caf::scoped_actor self{*impl_->sys};
    self
      ->request(impl_->host, impl_->cfg.hand_off_timeout, shutdown_atom::value)
      .receive([](bool) {}, [](caf::error&) {});
    self->send_exit(impl_->host, caf::exit_reason::user_shutdown);
    self->wait_for(impl_->host);
  }
  for (auto& w : impl_->workers)
    caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  impl_->routes->set_routes(nullptr);
}

bool entities::hosting() const {
  return !impl_->workers.empty();
}

caf::expected<caf::actor> entities::ref(const std::string& type,
                                        const std::string& key) {
  if (key.empty() || key.size() > impl_->cfg.max_key_bytes)
    return caf::make_error(errc::invalid_entity_key,
                           "entity key of " + std::to_string(key.size()) +
                             " bytes for type \"" + type +
                             "\": keys have 1 to " +
                             std::to_string(impl_->cfg.max_key_bytes) +
                             " bytes (ferry.entities.max-key-bytes)");
  if (!impl_->host)
    return caf::make_error(errc::entity_unavailable,
                           "this node joins no cluster and hosts no entity "
                           "types: no entity can be reached from it");
  auto& sys = *impl_->sys;
  caf::actor_config acfg;
  return caf::make_actor<entity_ref, caf::actor>(
    sys.next_actor_id(), sys.node(), &sys, acfg,
    std::weak_ptr<router>{impl_->routes}, type, key,
    shard_of(type, key, impl_->cfg.shards));
}

entity_stats entities::stats() const {
  entity_stats result;
  if (!impl_->host)
    return result;
  caf::scoped_actor self{*impl_->sys};
  self->request(impl_->host, std::chrono::seconds{5}, stats_atom::value)
    .receive([&](entity_stats& x) { result = std::move(x); },
             [](caf::error&) {});
  auto& c = *impl_->store_counts;
  result.saves = c.saves.load(std::memory_order_relaxed);
  result.conflicts = c.conflicts.load(std::memory_order_relaxed);
  result.store_calls = c.calls.load(std::memory_order_relaxed);
  result.store_failures = c.failures.load(std::memory_order_relaxed);
  result.store_seconds =
    static_cast<double>(c.call_nanoseconds.load(std::memory_order_relaxed)) /
    1e9;
  return result;
}

} // namespace ferry
