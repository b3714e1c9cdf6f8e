// node_impl: a node's life, from init to shutdown, and spawns for peers
// (see node/node_impl.hpp).
#include "node/node_impl.hpp"

#include "link/actor_links.hpp"

#include "node/malloc_tuning.hpp"

#include "metrics/exposition.hpp"

#include "ferry/errc.hpp"

#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/vector_pool.hpp"
#include "ferry/store/store_config.hpp"

#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/settings.hpp>

#include <algorithm>
#include <iostream>
#include <random>
#include <thread>

namespace ferry::detail {

using serializers::detail::list_names;

namespace {

using trim_atom = caf::atom_constant<caf::atom("ferry_trim")>;

/// Frees the vector pool's idle vectors every `every`, so that an idle
/// process gives them back too (the pool checks by itself only when used).
caf::behavior pool_janitor(caf::event_based_actor* self,
                           std::chrono::milliseconds every) {
  self->delayed_send(self, every, trim_atom::value);
  return {
    [self, every](trim_atom) {
      serializers::trim_vector_pool();
      self->delayed_send(self, every, trim_atom::value);
    },
  };
}

using sweep_atom = caf::atom_constant<caf::atom("ferry_swp")>;
using expire_atom = caf::atom_constant<caf::atom("ferry_exp")>;

/// Lets relayed objects go once unused for their linger, checking every
/// half linger, and answers relay requests that waited long enough for
/// their key (transfer/relay_sources.hpp).
caf::behavior relay_sweeper(caf::event_based_actor* self,
                            std::shared_ptr<relay_sources> relays) {
  auto every = relays->linger() / 2;
  self->delayed_send(self, every, sweep_atom::value);
  return {
    [self, relays, every](sweep_atom) {
      relays->sweep();
      self->delayed_send(self, every, sweep_atom::value);
    },
    [relays](expire_atom) { relays->expire(); },
  };
}

/// Returns 64 random bits, never 0.
uint64_t draw_node_id() {
  std::random_device random;
  uint64_t result = 0;
  while (result == 0)
    result = (uint64_t{random()} << 32) | random();
  return result;
}

/// How long a stopping node waits for its connections to send what they
/// queued and close.
constexpr auto close_wait = std::chrono::seconds{2};

} // namespace

namespace {

/// `cfg`, telling the scheduler it is about to make how long its workers
/// spin (node/spinning_scheduler.hpp reads it from the config's content).
node_config& with_scheduler_spin(node_config& cfg) {
  caf::put(cfg.content, "ferry.scheduler.spin",
           std::chrono::duration_cast<caf::timespan>(cfg.scheduler_spin));
  return cfg;
}

} // namespace

node_impl::node_impl(node_config& cfg)
  : cfg_(cfg),
    id_(draw_node_id()),
    time_(cfg.clock ? cfg.clock.get() : &clock::steady()),
    relays_(std::make_shared<relay_sources>(
      cfg.node_name, relay_sources::default_linger,
      relay_sources::default_grace, *time_)),
    sys_(with_scheduler_spin(cfg)),
    registry_(cfg.shared_registry()),
    exposed_(cfg.node_name),
    unlinked_logged_(std::chrono::seconds{1}, *time_) {
  // nop
}

void node_impl::close_links() {
  {
    lock_guard guard{listen_mtx_};
    for (auto& x : listeners_)
      x->close();
    listeners_.clear();
  }
  // In order: what each link queued goes out, then a goodbye; senders
  // waiting for credit wake. The table makes no link after this.
  for (auto& link : links_.close())
    link->shut_down(caf::exit_reason::remote_link_unreachable, nullptr, true);
  // Real time: sockets drain on their own, whatever the node's clock says.
  auto& real = clock::steady();
  auto deadline = real.now() + close_wait;
  while (open_connections_->count() > 0 && real.now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds{2});
}

node_impl::~node_impl() {
  metrics_.reset();
  if (janitor_)
    caf::anon_send_exit(janitor_, caf::exit_reason::user_shutdown);
  if (relay_sweeper_)
    caf::anon_send_exit(relay_sweeper_, caf::exit_reason::user_shutdown);
  if (linker_)
    caf::anon_send_exit(linker_, caf::exit_reason::user_shutdown);
  if (io_) {
    close_links();
    // No frame arrives after this.
    io_->stop();
  }
  // The links are down, so their rings are closed: the readers end once
  // what their rings hold is read.
  lanes_.stop_all();
  // A thread that took a link before this (a sender encoding, the puller
  // in a handler, a credit coming back) uses this node's members through it
  // until it lets the link go: wait for that. Nothing else keeps a link:
  // proxies, the puller and credit tokens hold them weakly.
  links_.clear();
  live_links_.wait_idle();
  // The connections went with their links; what the I/O contexts' handlers
  // still hold (connections never linked) goes with the contexts, while
  // the node's members they use are still here.
  io_.reset();
  relays_->clear();
  relays_.reset(); // before the store (see node_impl.hpp)
}

caf::error node_impl::init() {
  if (cfg_.tune_malloc)
    tune_malloc();
  io_ = std::make_unique<net::io_threads>(cfg_.io_threads, cfg_.io_spin);
  pool_.emplace(cfg_.vector_pool, cfg_.node_name,
                [this](const std::string& line) { log(line); });
  if (cfg_.vector_pool.max_bytes > 0)
    janitor_ = sys_.spawn<caf::hidden>(
      pool_janitor,
      std::max(cfg_.vector_pool.max_idle / 2, std::chrono::milliseconds{50}));
  if (auto err = check_families())
    return err;
  if (cfg_.store_enabled)
    attach_store();
  if (cfg_.metrics_port) {
    dashboard_ = std::make_unique<dashboard>(
      dashboard_settings{cfg_.metrics_token, cfg_.dashboard_files,
                         cfg_.chart_js},
      dashboard_source{[this] { return figures(); },
                       [this] {
                         lock_guard guard{figures_mtx_};
                         return cluster_actions_;
                       }});
    auto server = metrics_server::start(
      cfg_.metrics_address, *cfg_.metrics_port,
      [this](const http_request& req) { return dashboard_->answer(req); },
      [this](const std::string& line) { log(line); }, {},
      [this] { dashboard_->tick(); });
    if (!server)
      return std::move(server.error());
    metrics_ = std::move(*server);
  }
  linker_ = sys_.spawn<caf::hidden>(linker);
  relay_sweeper_ = sys_.spawn<caf::hidden>(relay_sweeper, relays_);
  relays_->set_timer([sweeper = relay_sweeper_](auto delay) {
    caf::delayed_anon_send(sweeper, delay, expire_atom::value);
  });
  return caf::none;
}

caf::error node_impl::check_families() const {
  auto known = registry_->families();
  auto check = [&](const link_config& cfg,
                   const std::string& where) -> caf::error {
    for (auto& family : cfg.serializers)
      if (std::find(known.begin(), known.end(), family) == known.end())
        return caf::make_error(errc::invalid_config,
                               "unknown family \"" + family +
                                 "\" in serializers" + where +
                                 "; known families are " + list_names(known));
    return caf::none;
  };
  if (auto err = check(cfg_.default_link, ""))
    return err;
  for (auto& [peer, cfg] : cfg_.links)
    if (auto err = check(cfg, " of the link to \"" + peer + "\""))
      return err;
  return caf::none;
}

void node_impl::attach_store() {
  store::store_config sc;
  sc.name = cfg_.store_name;
  sc.capacity = cfg_.store_capacity;
  sc.prefault = cfg_.store_prefault;
  sc.persistent = cfg_.store_persistent;
  if (!cfg_.store_spill_directory.empty())
    sc.spill_directory = cfg_.store_spill_directory;
  sc.allow_out_of_band_ref_serialization =
    cfg_.allow_out_of_band_ref_serialization;
  auto attached = store::object_store::attach(sc);
  if (!attached) {
    log("runs without a store (large frames travel inline or in chunks): " +
        render(attached.error()));
    return;
  }
  store_.emplace(std::move(*attached));
  imports_.import_into(*store_);
  // Rings of same-host lanes that crashed processes of this host left.
  if (auto removed = lane::ring::remove_orphans(); removed > 0)
    log("removed " + std::to_string(removed) +
        " same-host lane rings that ended processes left in /dev/shm");
}

std::string node_impl::metrics_text() {
  return render_exposition(figures());
}

node_figures node_impl::figures() {
  node_figures figures;
  figures.node_name = cfg_.node_name;
  for (auto& link : links())
    figures.links.push_back(link->snapshot());
  figures.peers = watch_.peers();
  if (store_)
    if (auto totals = store_->totals())
      figures.store = std::move(*totals);
  figures.resident_bytes = resident_memory_bytes();
  {
    lock_guard guard{figures_mtx_};
    if (cluster_figures_)
      figures.cluster = cluster_figures_();
    if (entity_figures_)
      figures.entities = entity_figures_();
  }
  return figures;
}

void node_impl::set_cluster_figures(std::function<cluster_figures()> source) {
  lock_guard guard{figures_mtx_};
  cluster_figures_ = std::move(source);
}

std::string node_impl::figures_json() {
  return dashboard_ ? dashboard_->snapshot_json() : snapshot_json(figures());
}

void node_impl::set_cluster_actions(cluster_actions actions) {
  lock_guard guard{figures_mtx_};
  cluster_actions_ = std::move(actions);
}

void node_impl::set_entity_figures(std::function<entity_stats()> source) {
  lock_guard guard{figures_mtx_};
  entity_figures_ = std::move(source);
}

void node_impl::disconnect(uint64_t id, const caf::error& why) {
  auto link = links_.find(id);
  if (!link || !link->shut_down(caf::exit_reason::remote_link_unreachable,
                                nullptr, true))
    return;
  links_.drop(link);
  watch_.down(link->peer_name(), why);
}

void node_impl::log(const std::string& line) const {
  auto full = "ferry[" + cfg_.node_name + "]: " + line;
  if (cfg_.log_sink)
    cfg_.log_sink(full);
  else
    std::cerr << full + "\n";
}

void node_impl::log_unlinked(const std::string& line) {
  if (auto out = unlinked_logged_.pass(line))
    log(*out);
}

caf::expected<uint64_t>
node_impl::spawn(spawn_request& req, const std::shared_ptr<link_state>& link) {
  // The slot first: a peer above its bound gets no decode and no actor. It
  // goes back on every way out but adopt_spawned.
  auto slot = link->reserve_spawn(req.type_name);
  if (!slot)
    return std::move(slot.error());
  // As in deliver: what escapes a decoder (an allocation failing) or the
  // actor's constructor becomes the answer; the thread reading the link,
  // which runs this, must not see it.
  caf::expected<caf::actor> spawned{caf::actor{}};
  try {
    auto args = link->decode_message(req.args);
    if (!args)
      return std::move(args.error());
    spawned = sys_.spawn<caf::actor>(req.type_name, std::move(*args));
  } catch (...) {
    return caf::make_error(
      errc::decode_failed,
      "spawning \"" + req.type_name + "\" for node " + link->peer_name() +
        " threw: " + serializers::detail::current_exception_text());
  }
  if (!spawned)
    return caf::make_error(errc::no_such_actor,
                           "node " + cfg_.node_name + " cannot spawn \"" +
                             req.type_name + "\": " + render(spawned.error()) +
                             "; register it there with "
                             "cfg.add_actor_type<T>(\"" +
                             req.type_name + "\")");
  link->adopt_spawned(std::move(*slot), *spawned);
  return link->export_actor(caf::actor_cast<caf::strong_actor_ptr>(*spawned));
}

} // namespace ferry::detail
