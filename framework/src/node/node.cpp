// node: the public face of a ferry node (see ferry/node.hpp); everything
// it does is node_impl's (node/node_impl.hpp).
#include "ferry/node.hpp"

#include "node/node_impl.hpp"
#include "node/tls_settings.hpp"
#include "wire/read_context.hpp"

#include "ferry/errc.hpp"

#include <caf/actor_cast.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>

namespace ferry {

// -- node ---------------------------------------------------------------------

caf::expected<std::unique_ptr<node>> node::start(node_config& cfg) {
  if (detail::read_context_binding::bound(cfg) != nullptr)
    return caf::make_error(errc::invalid_config,
                           "this node_config runs node " + cfg.node_name
                             + " already; give each node a node_config of "
                               "its own");
  if (auto err = cfg.finalize())
    return err;
  auto tls = detail::tls_settings::prepare(cfg);
  if (!tls)
    return std::move(tls.error());
  auto impl = std::make_unique<detail::node_impl>(cfg);
  impl->set_tls(*tls);
  if (auto err = impl->init())
    return err;
  if (*tls)
    for (auto& line : (*tls)->warnings())
      impl->log("warning: " + line);
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
  auto result = impl_->open_port(impl_->gateway_handle(), port, address);
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
  auto release = [&] { (*link)->release_unsent(tickets, transfers); };
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

} // namespace ferry
