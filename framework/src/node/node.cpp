// node: the public face of a ferry node (see ferry/node.hpp); everything
// it does is node_impl's (node/node_impl.hpp).
#include "ferry/node.hpp"

#include "cluster/cluster_member.hpp"
#include "node/node_impl.hpp"
#include "transport/tls_context.hpp"

#include "ferry/errc.hpp"

#include <caf/actor_cast.hpp>
#include <caf/sec.hpp>

#include <future>

namespace ferry {

// -- node ---------------------------------------------------------------------

namespace {

/// Releases a config's claim when a start fails or its node ends.
struct config_claim {
  std::atomic<bool>* flag;
  ~config_claim() {
    if (flag != nullptr)
      flag->store(false);
  }
};

/// Waits for the answer of an ask (lookup, spawn) for at most `timeout`;
/// forgets the ask when none came (a late answer is then counted as
/// unasked).
caf::expected<uint64_t>
await_answer(const std::shared_ptr<detail::link_state>& link,
             std::chrono::milliseconds timeout,
             const std::function<uint64_t(detail::pending_asks::callback)>& ask,
             const std::string& what) {
  auto answer = std::make_shared<std::promise<detail::pending_asks::answer>>();
  auto result = answer->get_future();
  auto id = ask([answer](detail::pending_asks::answer a) {
    answer->set_value(std::move(a));
  });
  if (result.wait_for(timeout) != std::future_status::ready) {
    link->forget_ask(id);
    return caf::make_error(caf::sec::request_timeout,
                           "node " + link->peer_name() + " did not answer " +
                             what + " within " +
                             std::to_string(timeout.count()) + " ms");
  }
  auto a = result.get();
  if (a.error)
    return std::move(a.error);
  return a.actor;
}

} // namespace

caf::expected<std::unique_ptr<node>> node::start(node_config& cfg) {
  if (cfg.in_use_.exchange(true))
    return caf::make_error(errc::invalid_config,
                           "this node_config runs node " + cfg.node_name +
                             " already; give each node a node_config of "
                             "its own");
  config_claim claim{&cfg.in_use_};
  if (auto err = cfg.finalize())
    return err;
  detail::net::tls_options opts;
  opts.certificate = cfg.tls_certificate;
  opts.key = cfg.tls_key;
  opts.ca_file = cfg.tls_ca_file;
  opts.passphrase = cfg.tls_passphrase;
  opts.node_name = cfg.node_name;
  auto tls = detail::net::tls_context::make(opts);
  if (!tls)
    return std::move(tls.error());
  auto impl = std::make_unique<detail::node_impl>(cfg);
  impl->set_tls(*tls);
  if (auto err = impl->init())
    return err;
  if (*tls)
    for (auto& line : (*tls)->warnings())
      impl->log("warning: " + line);
  claim.flag = nullptr; // released by the node
  std::unique_ptr<node> result{new node(std::move(impl))};
  if (cfg.cluster.enabled()) {
    auto* impl_ptr = result->impl_.get();
    detail::cluster::node_access access;
    access.log = [impl_ptr](const std::string& line) {
      impl_ptr->log(line);
    };
    access.disconnect = [impl_ptr](uint64_t uid, const caf::error& why) {
      impl_ptr->disconnect(uid, why);
    };
    auto member = detail::cluster::cluster_member::start(
      *result, cfg.cluster, impl_ptr->id(), std::move(access));
    if (!member)
      return std::move(member.error());
    result->cluster_ = std::move(*member);
    impl_ptr->set_cluster_figures(
      [member_ptr = result->cluster_.get()] { return member_ptr->figures(); });
  }
  return result;
}

node::node(std::unique_ptr<detail::node_impl> impl) : impl_(std::move(impl)) {
  // nop
}

node::~node() {
  auto& flag = impl_->config().in_use_;
  impl_->set_cluster_figures({});
  cluster_.reset(); // stops the daemon before the node ends
  impl_.reset();
  flag.store(false);
}

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
  auto result = impl_->open_port(port, address);
  if (!result)
    return caf::make_error(errc::connect_failed, "cannot listen on " + address +
                                                   ":" + std::to_string(port) +
                                                   ": " +
                                                   render(result.error()));
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
                             "node " + (*link)->peer_name() +
                               " has no published default actor; pass "
                               "the name of an exposed actor");
  } else {
    auto found = await_answer(
      *link, impl_->config().handshake_timeout,
      [&](detail::pending_asks::callback cb) {
        return (*link)->ask_lookup(name, std::move(cb));
      },
      "a lookup of \"" + name + "\"");
    if (!found)
      return std::move(found.error());
    id = *found;
  }
  return caf::actor_cast<caf::actor>((*link)->proxy(id));
}

caf::expected<caf::actor>
node::remote_spawn(const std::string& host, uint16_t port,
                   const std::string& type_name, caf::message args,
                   std::chrono::milliseconds timeout) {
  auto link = impl_->connect(host, port);
  if (!link)
    return std::move(link.error());
  std::vector<store::transfer_ticket> tickets;
  std::vector<uint64_t> transfers;
  detail::inline_one<std::string> families;
  detail::spawn_request req;
  req.type_name = type_name;
  auto err = (*link)->encode_message(0, nullptr, caf::make_message_id(), args,
                                     tickets, transfers, families, req.args);
  // Store tickets and held frames of the arguments go back if the peer never
  // takes them.
  auto release = [&] {
    (*link)->release_unsent(tickets, transfers);
  };
  if (err) {
    release();
    return err;
  }
  auto id = await_answer(
    *link, timeout,
    [&](detail::pending_asks::callback cb) {
      return (*link)->ask_spawn(std::move(req), std::move(cb));
    },
    "a spawn of \"" + type_name + "\"");
  if (!id) {
    release();
    return std::move(id.error());
  }
  return caf::actor_cast<caf::actor>((*link)->proxy(*id));
}

std::vector<link_stats> node::stats() const {
  std::vector<link_stats> result;
  for (auto& link : impl_->links())
    result.push_back(link->snapshot());
  return result;
}

uint16_t node::metrics_port() const {
  return impl_->metrics_port();
}

std::string node::metrics_text() const {
  return impl_->metrics_text();
}

void node::watch_nodes(const caf::actor& whom) {
  impl_->watch().watch(whom);
}

void node::unwatch_nodes(const caf::actor& whom) {
  impl_->watch().unwatch(whom);
}

std::vector<peer_state> node::peers() const {
  return impl_->watch().peers();
}

caf::expected<link_stats> node::stats(const std::string& peer) const {
  if (auto link = impl_->find_link(peer))
    return link->snapshot();
  return caf::make_error(errc::link_down,
                         "no link to a node named \"" + peer + "\"");
}

namespace {

caf::error no_cluster(const std::string& name) {
  return caf::make_error(errc::cluster_refused,
                         "node " + name +
                           " joins no cluster (ferry.cluster.name)");
}

} // namespace

std::vector<member_info> node::members() const {
  return cluster_ ? cluster_->members() : std::vector<member_info>{};
}

void node::watch_members(const caf::actor& whom) {
  if (cluster_)
    cluster_->watch(whom);
}

void node::unwatch_members(const caf::actor& whom) {
  if (cluster_)
    cluster_->unwatch(whom);
}

void node::leave() {
  if (cluster_)
    cluster_->leave();
}

caf::expected<bool> node::down_member(const std::string& address) {
  if (!cluster_)
    return no_cluster(name());
  return cluster_->down(address);
}

caf::expected<bool> node::register_actor(const std::string& key,
                                         const caf::actor& whom) {
  if (!cluster_)
    return no_cluster(name());
  return cluster_->register_actor(key, whom);
}

caf::expected<std::vector<caf::actor>>
node::find_actors(const std::string& key) {
  if (!cluster_)
    return no_cluster(name());
  return cluster_->find(key);
}

void node::subscribe_actors(const std::string& key, const caf::actor& whom) {
  if (cluster_)
    cluster_->subscribe(key, whom);
}

} // namespace ferry
