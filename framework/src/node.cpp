// node and node_impl: the actor system, the store client, links, handshakes.
#include "ferry/node.hpp"

#include "detail/node_impl.hpp"

#include "ferry/errc.hpp"
#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/vector_pool.hpp"

#include "ferry/store/object_store.hpp"
#include "ferry/store/store_config.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/io/middleman.hpp>
#include <caf/make_actor.hpp>
#include <caf/scoped_actor.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

namespace ferry {

namespace detail {

namespace {

/// Families of `prefs` (in order) that the peer accepts and can decode.
std::vector<std::string> meet(const std::vector<std::string>& prefs,
                              const std::vector<std::string>& accepted,
                              const std::vector<std::string>& decodable) {
  std::vector<std::string> result;
  for (auto& family : prefs)
    if (std::find(accepted.begin(), accepted.end(), family) != accepted.end()
        && std::find(decodable.begin(), decodable.end(), family)
             != decodable.end())
      result.push_back(family);
  return result;
}

constexpr auto handshake_timeout = std::chrono::seconds{30};

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

/// The vector pool is process-wide: how many running nodes set limits, and
/// which node set the limits in force (it may have stopped since).
struct pool_setter {
  std::mutex mtx;
  size_t live_nodes = 0;
  std::string node_name;
  serializers::vector_pool_limits limits;
};

pool_setter& pool_owner() {
  static pool_setter instance;
  return instance;
}

} // namespace

node_impl::node_impl(node_config& cfg)
  : cfg_(cfg), sys_(cfg), registry_(cfg.shared_registry()) {
  // nop
}

node_impl::~node_impl() {
  if (store_)
    unregister_import_store(&sys_);
  if (janitor_)
    caf::anon_send_exit(janitor_, caf::exit_reason::user_shutdown);
  if (pool_applied_) {
    auto& owner = pool_owner();
    std::lock_guard<std::mutex> guard{owner.mtx};
    --owner.live_nodes;
  }
  // Links first: shutting them down wakes every sender waiting for credit,
  // then the gateway lets go of this node once its running calls are done.
  for (auto& link : links())
    link->shut_down(caf::exit_reason::remote_link_unreachable, nullptr);
  if (gateway_) {
    static_cast<gateway*>(caf::actor_cast<caf::abstract_actor*>(gateway_))
      ->detach_node();
    // A handshake may have made a link in between.
    for (auto& link : links())
      link->shut_down(caf::exit_reason::remote_link_unreachable, nullptr);
  }
  // A thread that took a link before this (a sender encoding, the puller
  // in a handler, a credit coming back) uses this node's members through it
  // until it lets the link go: wait for that, as detach_node waits for the
  // gateway's calls. Nothing else keeps a link: proxies, the puller and
  // credit tokens hold them weakly.
  std::vector<std::weak_ptr<link_state>> taken;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& [id, link] : links_)
      taken.emplace_back(link);
    links_.clear();
  }
  for (auto& link : taken)
    while (!link.expired())
      std::this_thread::sleep_for(std::chrono::microseconds{100});
}

caf::error node_impl::init() {
  if (cfg_.tune_malloc)
    tune_malloc();
  if (auto workers = caf::get_or(cfg_, "middleman.workers", size_t{0});
      workers > 0)
    log("warning: middleman.workers is " + std::to_string(workers)
        + ": CAF reads incoming messages on scheduler jobs, so actors "
          "blocked in send() on every scheduler thread get no credit until "
          "send-timeout refuses their messages (set middleman.workers to 0, "
          "ferry's default)");
  {
    // One pool per process: a node whose limits differ from those a running
    // node set says so, instead of changing them silently.
    auto& owner = pool_owner();
    std::lock_guard<std::mutex> guard{owner.mtx};
    if (owner.live_nodes > 0 && owner.limits != cfg_.vector_pool)
      log("warning: this node's ferry.vector-pool settings differ from the "
          "limits in force in this process (set by node " + owner.node_name
          + " when it started); the pool is process-wide, so this node's "
            "settings now apply to every node of the process (give them all "
            "the same ferry.vector-pool settings)");
    serializers::vector_pool_config(cfg_.vector_pool);
    owner.limits = cfg_.vector_pool;
    owner.node_name = cfg_.node_name;
    ++owner.live_nodes;
    pool_applied_ = true;
  }
  if (cfg_.vector_pool.max_bytes > 0)
    janitor_ = sys_.spawn<caf::hidden>(
      pool_janitor, std::max(cfg_.vector_pool.max_idle / 2,
                             std::chrono::milliseconds{50}));
  auto known = registry_->families();
  auto check_families = [&](const link_config& cfg,
                            const std::string& where) -> caf::error {
    for (auto& family : cfg.serializers)
      if (std::find(known.begin(), known.end(), family) == known.end())
        return caf::make_error(errc::invalid_config,
                               "unknown family \"" + family
                                 + "\" in serializers" + where
                                 + "; known families are " + join(known));
    return caf::none;
  };
  if (auto err = check_families(cfg_.default_link, ""))
    return err;
  for (auto& [peer, cfg] : cfg_.links)
    if (auto err = check_families(cfg, " of the link to \"" + peer + "\""))
      return err;
  if (cfg_.store_enabled) {
    store::store_config sc;
    sc.name = cfg_.store_name;
    sc.capacity = cfg_.store_capacity;
    sc.prefault = cfg_.store_prefault;
    if (!cfg_.store_spill_directory.empty())
      sc.spill_directory = cfg_.store_spill_directory;
    sc.allow_out_of_band_ref_serialization
      = cfg_.allow_out_of_band_ref_serialization;
    auto attached = store::object_store::attach(sc);
    if (attached) {
      store_.emplace(std::move(*attached));
      register_import_store(&sys_, *store_);
    } else {
      log("runs without a store (large frames travel inline or in chunks): "
          + render(attached.error()));
    }
  }
  caf::actor_config acfg;
  gateway_ = caf::make_actor<gateway, caf::actor>(sys_.next_actor_id(),
                                                  sys_.node(), &sys_, acfg,
                                                  this);
  return caf::none;
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

bool node_impl::shares_store_with(const hello& peer) const {
  return store_.has_value() && peer.has_store && peer.host_id == cfg_.host_id
         && peer.store_name == cfg_.store_name
         && peer.store_token == store_->token();
}

uint64_t node_impl::inbound_token_locked(const caf::node_id& peer) {
  if (auto i = links_.find(peer);
      i != links_.end() && i->second && !i->second->is_down())
    return i->second->inbound_token();
  auto& token = tokens_[peer];
  while (token == 0)
    token = (uint64_t{random_()} << 32) | random_();
  return token;
}

hello node_impl::make_hello(const link_config& cfg) const {
  hello result;
  result.node_name = cfg_.node_name;
  result.host_id = cfg_.host_id;
  result.store_name = cfg_.store_name;
  result.has_store = store_.has_value();
  result.store_token = store_ ? store_->token() : 0;
  result.serializers = cfg.serializers;
  result.deserializers = cfg.deserializers;
  result.decodable = registry_->families();
  result.gateway = gateway_;
  result.default_actor = default_actor_id();
  result.window_bytes = cfg.window_bytes;
  result.window_messages = cfg.window_messages;
  return result;
}

caf::expected<hello> node_impl::accept(const hello& peer,
                                       caf::execution_unit* host,
                                       const link_config* chosen) {
  if (peer.protocol != wire_protocol_version)
    return caf::make_error(errc::handshake_failed,
                           "node " + peer.node_name + " speaks ferry wire "
                             "protocol "
                             + std::to_string(peer.protocol) + ", node "
                             + cfg_.node_name + " speaks "
                             + std::to_string(wire_protocol_version)
                             + "; run the same ferry version on both");
  if (!peer.gateway)
    return caf::make_error(errc::handshake_failed,
                           "handshake without a gateway");
  // The connecting side passes the config it offered in its hello (one set
  // for the peer's address counts there); the accepting side goes by name.
  auto& cfg = chosen != nullptr ? *chosen : cfg_.link_for(peer.node_name);
  // Its link_token is set below, with the link it names.
  auto mine = make_hello(cfg);
  auto send_families = meet(cfg.serializers, peer.deserializers,
                            peer.decodable);
  auto receive_families = meet(peer.serializers, cfg.deserializers,
                               mine.decodable);
  if (send_families.empty() || receive_families.empty()) {
    bool outbound = send_families.empty();
    auto& sender = outbound ? cfg_.node_name : peer.node_name;
    auto& receiver = outbound ? peer.node_name : cfg_.node_name;
    auto& prefs = outbound ? cfg.serializers : peer.serializers;
    auto& allowed = outbound ? peer.deserializers : cfg.deserializers;
    auto& decodable = outbound ? peer.decodable : mine.decodable;
    // Families both lists name that the receiver has no decoder for.
    std::vector<std::string> missing;
    for (auto& family : meet(prefs, allowed, prefs))
      if (std::find(decodable.begin(), decodable.end(), family)
          == decodable.end())
        missing.push_back(family);
    return caf::make_error(
      errc::no_common_family,
      "node " + sender + " sends with serializers " + join(prefs)
        + " but node " + receiver + " accepts only deserializers "
        + join(allowed)
        + (missing.empty()
             ? std::string{}
             : ", and of those it cannot decode " + join(missing)
                 + " (no such family registered there)")
        + "; add a common family to one of the lists (ferry.links."
        + receiver + ".serializers on " + sender + " or ferry.links." + sender
        + ".deserializers on " + receiver + ")");
  }
  std::shared_ptr<link_state> link;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& slot = links_[peer.gateway.node()];
    if (slot && !slot->is_down()) {
      // Handshakes crossing each other name the same tokens. Another token
      // comes from a peer whose earlier link to this node is gone while this
      // node still holds it (or from a third node forging a hello): taking
      // it silently would leave one direction dropping everything.
      if (peer.link_token != slot->outbound_token())
        return caf::make_error(
          errc::handshake_failed,
          "node " + cfg_.node_name + " still holds a link to node "
            + peer.node_name
            + " from an earlier connection (or a third node sent a hello "
              "in its name); retry once that link is down");
      mine.link_token = slot->inbound_token();
      return mine;
    }
    // The token named in every hello to this peer so far (handshakes
    // crossing each other name the same one); the link keeps it now, and
    // the answer names the link's token whatever happened meanwhile.
    auto token = inbound_token_locked(peer.gateway.node());
    tokens_.erase(peer.gateway.node());
    mine.link_token = token;
    slot = std::make_shared<link_state>(*this, peer, cfg, send_families,
                                        shares_store_with(peer), token);
    link = slot;
  }
  // The link goes down when CAF loses the connection (the peer gateway's
  // proxy terminates) or the peer node shuts down.
  std::weak_ptr<link_state> weak = link;
  auto* self = this;
  auto peer_node = peer.gateway.node();
  caf::actor_cast<caf::abstract_actor*>(peer.gateway)
    ->attach_functor([weak, self, peer_node](const caf::error& reason) {
      if (auto l = weak.lock()) {
        l->shut_down(reason ? reason
                            : caf::error{caf::exit_reason::remote_link_unreachable},
                     nullptr);
        self->drop_link(peer_node);
      }
    });
  static_cast<void>(host);
  return mine;
}

caf::expected<std::shared_ptr<link_state>>
node_impl::connect(const std::string& host, uint16_t port) {
  auto address = host + ":" + std::to_string(port);
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto i = links_by_address_.find(address); i != links_by_address_.end())
      if (auto j = links_.find(i->second);
          j != links_.end() && !j->second->is_down())
        return j->second;
  }
  auto peer_gateway = sys_.middleman().remote_actor(host, port);
  if (!peer_gateway)
    return caf::make_error(errc::connect_failed,
                           "cannot connect to " + address + ": "
                             + render(peer_gateway.error()));
  if (auto existing = find_link(peer_gateway->node())) {
    std::lock_guard<std::mutex> guard{mtx_};
    links_by_address_[address] = peer_gateway->node();
    return existing;
  }
  caf::scoped_actor self{sys_};
  caf::error failure;
  std::string peer_name;
  self->request(*peer_gateway, handshake_timeout, identify{})
    .receive([&](std::string& name) { peer_name = std::move(name); },
             [&](caf::error& err) { failure = std::move(err); });
  if (failure)
    return caf::make_error(errc::handshake_failed,
                           "node at " + address + " did not identify itself: "
                             + render(failure));
  auto& cfg = cfg_.links.count(peer_name) != 0
                ? cfg_.links.at(peer_name)
                : cfg_.link_for(address);
  auto offer = make_hello(cfg);
  {
    std::lock_guard<std::mutex> guard{mtx_};
    offer.link_token = inbound_token_locked(peer_gateway->node());
  }
  hello reply;
  self->request(*peer_gateway, handshake_timeout, offer)
    .receive([&](hello& x) { reply = std::move(x); },
             [&](caf::error& err) { failure = std::move(err); });
  if (failure) {
    if (failure.category() == caf::atom("ferry_fw"))
      return failure;
    return caf::make_error(errc::handshake_failed,
                           "handshake with node " + peer_name + " at "
                             + address + " failed: " + render(failure));
  }
  // The peer accepted; build our side from its answer.
  if (peer_name != reply.node_name)
    reply.node_name = peer_name;
  auto link = accept(reply, nullptr, &cfg);
  if (!link)
    return std::move(link.error());
  std::lock_guard<std::mutex> guard{mtx_};
  links_by_address_[address] = peer_gateway->node();
  auto i = links_.find(peer_gateway->node());
  if (i == links_.end())
    return caf::make_error(errc::link_down,
                           "the link to " + address + " went down at once");
  i->second->set_default_actor(reply.default_actor);
  return i->second;
}

std::shared_ptr<link_state> node_impl::find_link(const caf::node_id& id) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = links_.find(id);
  return i != links_.end() ? i->second : nullptr;
}

std::shared_ptr<link_state> node_impl::find_link(const std::string& name) {
  std::lock_guard<std::mutex> guard{mtx_};
  for (auto& [id, link] : links_)
    if (link->peer_name() == name)
      return link;
  return nullptr;
}

void node_impl::drop_link(const caf::node_id& id) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = links_.find(id);
  if (i != links_.end() && i->second->is_down())
    links_.erase(i);
}

std::vector<std::shared_ptr<link_state>> node_impl::links() {
  std::lock_guard<std::mutex> guard{mtx_};
  std::vector<std::shared_ptr<link_state>> result;
  for (auto& [id, link] : links_)
    result.push_back(link);
  return result;
}

void node_impl::publish_default(const caf::actor& whom) {
  if (!whom)
    return; // Listen only: peers use exposed names and remote_spawn.
  std::lock_guard<std::mutex> guard{mtx_};
  default_actor_ = whom.id();
  exposed_by_id_[whom.id()] = caf::actor_cast<caf::strong_actor_ptr>(whom);
}

void node_impl::expose(const std::string& name, const caf::actor& whom) {
  if (!whom)
    return;
  std::lock_guard<std::mutex> guard{mtx_};
  exposed_by_name_[name] = whom;
  exposed_by_id_[whom.id()] = caf::actor_cast<caf::strong_actor_ptr>(whom);
}

caf::expected<uint64_t> node_impl::lookup(const std::string& name) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (name.empty() && default_actor_ != 0)
    return default_actor_;
  auto i = exposed_by_name_.find(name);
  if (i == exposed_by_name_.end()) {
    std::string known;
    for (auto& [key, value] : exposed_by_name_)
      known += (known.empty() ? "" : ", ") + key;
    return caf::make_error(errc::no_such_actor,
                           "node " + cfg_.node_name
                             + " exposes no actor named \"" + name
                             + "\" (exposed: [" + known
                             + "]); call node.expose(name, actor) there");
  }
  return i->second.id();
}

caf::strong_actor_ptr node_impl::exposed(uint64_t id) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = exposed_by_id_.find(id);
  return i != exposed_by_id_.end() ? i->second : nullptr;
}

uint64_t node_impl::default_actor_id() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return default_actor_;
}

const std::string* node_impl::element_type(const caf::message& msg,
                                           size_t pos,
                                           std::type_index& type) const {
  auto rtti = msg.type(pos);
  if (rtti.second != nullptr) {
    type = std::type_index{*rtti.second};
  } else {
    auto builtin = cfg_.find_builtin(rtti.first);
    if (builtin == nullptr)
      return nullptr;
    type = *builtin;
  }
  return cfg_.find_name(type);
}

caf::expected<uint64_t> node_impl::spawn(spawn_request& req,
                                         const caf::strong_actor_ptr& requester,
                                         caf::execution_unit* host) {
  static_cast<void>(host);
  if (!requester)
    return caf::make_error(errc::no_such_actor, "anonymous spawn request");
  auto link = find_link(requester->node());
  if (!link || !link->admits(req.args.token, "a spawn request"))
    return caf::make_error(errc::link_down,
                           "spawn request without a link (or without its "
                           "token)");
  // The slot first: a peer above its bound gets no decode and no actor. It
  // goes back on every way out but adopt_spawned.
  auto slot = link->reserve_spawn(req.type_name);
  if (!slot)
    return std::move(slot.error());
  // As in deliver: what escapes a decoder (an allocation failing) or the
  // actor's constructor becomes the answer; the BASP worker running this
  // must not see it.
  caf::expected<caf::actor> spawned{caf::actor{}};
  try {
    auto args = link->decode_message(req.args);
    if (!args)
      return std::move(args.error());
    spawned = sys_.spawn<caf::actor>(req.type_name, std::move(*args));
  } catch (...) {
    return caf::make_error(errc::decode_failed,
                           "spawning \"" + req.type_name + "\" for node "
                             + link->peer_name() + " threw: "
                             + serializers::detail::current_exception_text());
  }
  if (!spawned)
    return caf::make_error(errc::no_such_actor,
                           "node " + cfg_.node_name + " cannot spawn \""
                             + req.type_name + "\": " + render(spawned.error())
                             + "; register it there with "
                               "cfg.add_actor_type<T>(\""
                             + req.type_name + "\")");
  link->adopt_spawned(std::move(*slot), *spawned);
  return link->export_actor(caf::actor_cast<caf::strong_actor_ptr>(*spawned));
}

} // namespace detail

// -- node ---------------------------------------------------------------------

caf::expected<std::unique_ptr<node>> node::start(node_config& cfg) {
  if (auto err = cfg.finalize())
    return err;
  auto impl = std::make_unique<detail::node_impl>(cfg);
  if (auto err = impl->init())
    return err;
  return std::unique_ptr<node>{new node(std::move(impl))};
}

node::node(std::unique_ptr<detail::node_impl> impl) : impl_(std::move(impl)) {
  // nop
}

node::~node() = default;

caf::actor_system& node::system() {
  return impl_->system();
}

const std::string& node::name() const {
  return impl_->config().node_name;
}

store::object_store* node::store() {
  return impl_->store();
}

serializers::registry& node::registry() {
  return impl_->registry();
}

caf::expected<uint16_t> node::publish(const caf::actor& whom, uint16_t port,
                                      const std::string& address) {
  impl_->publish_default(whom);
  auto result = impl_->system().middleman().publish(impl_->gateway_handle(),
                                                    port, address.c_str(),
                                                    true);
  if (!result)
    return caf::make_error(errc::connect_failed,
                           "cannot listen on " + address + ":"
                             + std::to_string(port) + ": "
                             + render(result.error()));
  return *result;
}

void node::expose(const std::string& name, const caf::actor& whom) {
  impl_->expose(name, whom);
}

caf::expected<caf::actor> node::remote_actor(const std::string& host,
                                             uint16_t port,
                                             const std::string& name) {
  auto link = impl_->connect(host, port);
  if (!link)
    return std::move(link.error());
  uint64_t id = 0;
  if (name.empty()) {
    id = (*link)->default_actor();
    if (id == 0)
      return caf::make_error(errc::no_such_actor,
                             "node " + (*link)->peer_name()
                               + " has no published default actor; pass "
                                 "the name of an exposed actor");
  } else {
    caf::scoped_actor self{impl_->system()};
    caf::error failure;
    self->request((*link)->peer_gateway(), detail::handshake_timeout,
                  detail::lookup{name})
      .receive([&](uint64_t x) { id = x; },
               [&](caf::error& err) { failure = std::move(err); });
    if (failure)
      return failure;
  }
  return caf::actor_cast<caf::actor>((*link)->proxy(id));
}

caf::expected<caf::actor> node::remote_spawn(const std::string& host,
                                             uint16_t port,
                                             const std::string& type_name,
                                             caf::message args,
                                             std::chrono::milliseconds timeout) {
  auto link = impl_->connect(host, port);
  if (!link)
    return std::move(link.error());
  caf::scoped_actor self{impl_->system()};
  std::vector<store::transfer_ticket> tickets;
  std::vector<uint64_t> transfers;
  detail::inline_one<std::string> families;
  detail::spawn_request req{type_name, {}};
  auto err = (*link)->encode_message(0, nullptr, caf::make_message_id(), args,
                                     tickets, transfers, families, req.args);
  req.args.token = (*link)->outbound_token();
  // Store tickets and held frames of the arguments go back if the peer never
  // takes them.
  auto release = [&] {
    if (auto* store = impl_->store())
      for (auto& ticket : tickets)
        static_cast<void>(store->cancel(ticket));
    for (auto transfer : transfers)
      (*link)->finish_transfer(transfer);
  };
  if (err) {
    release();
    return err;
  }
  uint64_t id = 0;
  caf::error failure;
  self->request((*link)->peer_gateway(), timeout,
                std::move(req))
    .receive([&](uint64_t x) { id = x; },
             [&](caf::error& err) { failure = std::move(err); });
  if (failure) {
    release();
    return failure;
  }
  return caf::actor_cast<caf::actor>((*link)->proxy(id));
}

std::vector<link_stats> node::stats() const {
  std::vector<link_stats> result;
  for (auto& link : impl_->links())
    result.push_back(link->snapshot());
  return result;
}

caf::expected<link_stats> node::stats(const std::string& peer) const {
  if (auto link = impl_->find_link(peer))
    return link->snapshot();
  return caf::make_error(errc::link_down,
                         "no link to a node named \"" + peer + "\"");
}

} // namespace ferry
