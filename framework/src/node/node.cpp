// node: the public face of a ferry node (see ferry/node.hpp); everything
// it does is node_impl's (node/node_impl.hpp).
#include "ferry/node.hpp"

#include "node/node_impl.hpp"
#include "transport/tls_context.hpp"

#include "ferry/cluster.hpp"
#include "ferry/errc.hpp"

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
  auto member = ferry::cluster::start(*result->impl_, cfg.cluster);
  if (!member)
    return std::move(member.error());
  result->cluster_ = std::move(*member);
  auto hosted = ferry::entities::start(*result->impl_, *result->cluster_, cfg);
  if (!hosted)
    return std::move(hosted.error());
  result->entities_ = std::move(*hosted);
  if (result->entities_->hosting())
    result->impl_->set_entity_figures(
      [e = result->entities_.get()] { return e->stats(); });
  return result;
}

node::node(std::unique_ptr<detail::node_impl> impl) : impl_(std::move(impl)) {
  // nop
}

node::~node() {
  auto& flag = impl_->config().in_use_;
  impl_->set_entity_figures(nullptr);
  entities_.reset(); // saves what changed, releases the shards
  cluster_.reset();  // stops the daemon before the node ends
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
  return impl_->listen(address, port);
}

void node::expose(const std::string& name, const caf::actor& whom) {
  impl_->expose(name, whom);
}

caf::expected<caf::actor> node::remote_actor(const std::string& host,
                                             uint16_t port,
                                             const std::string& name) {
  return impl_->remote_actor(host, port, name);
}

caf::expected<caf::actor>
node::remote_spawn(const std::string& host, uint16_t port,
                   const std::string& type_name, caf::message args,
                   std::chrono::milliseconds timeout) {
  return impl_->remote_spawn(host, port, type_name, args, timeout);
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

ferry::cluster& node::cluster() {
  return *cluster_;
}

const ferry::cluster& node::cluster() const {
  return *cluster_;
}

ferry::entities& node::entities() {
  return *entities_;
}

} // namespace ferry
