// cluster_member: see cluster/cluster_member.hpp.
#include "cluster/cluster_member.hpp"

#include "cluster/daemon.hpp"
#include "cluster/protocol.hpp"
#include "thread_safety.hpp"

#include "ferry/errc.hpp"

#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <condition_variable>

namespace ferry::detail::cluster {

/// The daemon's way to its node: dials other members' daemons until the
/// member ends (`detach` waits for the dials under way).
class node_host final : public cluster_host {
public:
  explicit node_host(member_host& n) : node_(&n) {
    // nop
  }

  caf::expected<caf::actor> dial(const std::string& address) override {
    auto where = split_address(address, "a member's address");
    if (!where)
      return std::move(where.error());
    member_host* n = nullptr;
    {
      lock_guard guard{mtx_};
      if (node_ == nullptr)
        return caf::make_error(errc::link_down, "the node is ending");
      n = node_;
      ++dials_;
    }
    auto result = n->dial(where->first, where->second, daemon_name);
    {
      lock_guard guard{mtx_};
      --dials_;
    }
    cv_.notify_all();
    return result;
  }

  void disconnect(uint64_t uid, const caf::error& why) override {
    lock_guard guard{mtx_};
    if (node_ != nullptr)
      node_->disconnect(uid, why);
  }

  void log(const std::string& line) override {
    lock_guard guard{mtx_};
    if (node_ != nullptr)
      node_->log(line);
  }

  std::string figures_json() override {
    lock_guard guard{mtx_};
    return node_ != nullptr ? node_->figures_json() : std::string{};
  }

  /// Refuses dials from now on and waits for those under way.
  void detach() {
    unique_lock guard{mtx_};
    node_ = nullptr;
    while (dials_ != 0)
      cv_.wait(guard.native());
  }

private:
  mutex mtx_;
  std::condition_variable cv_;
  member_host* node_ FERRY_GUARDED_BY(mtx_);
  int dials_ FERRY_GUARDED_BY(mtx_) = 0;
};

caf::expected<std::pair<std::string, uint16_t>>
split_address(const std::string& address, const std::string& key) {
  auto colon = address.rfind(':');
  auto bad = [&] {
    return caf::make_error(errc::invalid_config,
                           key + " is '" + address +
                             "'; write it as host:port (10.0.0.1:4000)");
  };
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size())
    return bad();
  uint32_t port = 0;
  for (auto i = colon + 1; i < address.size(); ++i) {
    auto c = address[i];
    if (c < '0' || c > '9')
      return bad();
    port = port * 10 + static_cast<uint32_t>(c - '0');
    if (port > 65535)
      return bad();
  }
  if (port == 0)
    return bad();
  return std::pair{address.substr(0, colon), static_cast<uint16_t>(port)};
}

namespace {

// Asks the daemon and waits for its answer (it answers at once).
template <class T, class... Ts>
caf::expected<T> ask(caf::actor_system& sys, const caf::actor& daemon,
                     Ts&&... xs) {
  caf::scoped_actor self{sys};
  caf::expected<T> result{T{}};
  self->request(daemon, std::chrono::seconds{5}, std::forward<Ts>(xs)...)
    .receive([&](T& x) { result = std::move(x); },
             [&](caf::error& err) { result = std::move(err); });
  return result;
}

} // namespace

caf::expected<std::unique_ptr<cluster_member>>
cluster_member::start(member_host& n, const cluster_config& cfg) {
  auto where = split_address(cfg.address, "ferry.cluster.address");
  if (!where)
    return std::move(where.error());
  if (cfg.seeds.empty())
    return caf::make_error(errc::invalid_config,
                           "ferry.cluster.seeds is empty; list the nodes to "
                           "join through (this node's own address first to "
                           "start a cluster)");
  for (auto& seed : cfg.seeds)
    if (auto ok = split_address(seed, "a seed in ferry.cluster.seeds"); !ok)
      return std::move(ok.error());
  auto policy = parse_downing_policy(cfg.downing);
  if (!policy)
    return std::move(policy.error());
  if (cfg.gossip_interval.count() <= 0 || cfg.heartbeat_interval.count() <= 0)
    return caf::make_error(errc::invalid_config,
                           "ferry.cluster.gossip-interval and "
                           "heartbeat-interval must be above 0");
  if (auto port = n.listen(where->first, where->second); !port)
    return std::move(port.error());
  std::unique_ptr<cluster_member> self{new cluster_member};
  self->view_ = std::make_shared<published_view>();
  self->host_ = std::make_shared<node_host>(n);
  self->node_ = &n;
  self->name_ = cfg.name;
  daemon_settings s;
  s.cfg = cfg;
  s.policy = *policy;
  s.node_name = n.node_name();
  s.uid = n.node_id();
  s.time = &n.time();
  self->daemon_ =
    spawn_daemon(n.system(), std::move(s), self->host_, self->view_);
  n.expose(daemon_name, self->daemon_);
  n.set_cluster_figures(
    [view = self->view_, name = cfg.name, uid = n.node_id()] {
      return view->figures(name, uid);
    });
  // The actions hold the daemon, not this member: one under way when the
  // member ends meets a daemon that is gone and fails.
  n.set_cluster_actions(cluster_actions{
    [&sys = n.system(), daemon = self->daemon_](const std::string& address) {
      return ask<bool>(sys, daemon, down_atom::value, address);
    },
    [&sys = n.system(), daemon = self->daemon_](const std::string& address) {
      return ask<bool>(sys, daemon, leave_atom::value, address);
    },
    [&sys = n.system(), daemon = self->daemon_](const std::string& address) {
      return ask<std::string>(sys, daemon, figures_atom::value, address);
    }});
  return self;
}

cluster_figures cluster_member::figures() const {
  return view_->figures(name_, node_->node_id());
}

cluster_member::~cluster_member() {
  // The node's endpoint stops calling this member before it ends.
  node_->set_cluster_actions({});
  node_->set_cluster_figures({});
  if (daemon_) {
    caf::scoped_actor self{node_->system()};
    self->send_exit(daemon_, caf::exit_reason::user_shutdown);
    self->wait_for(daemon_);
  }
  host_->detach();
}

void cluster_member::leave() {
  caf::anon_send(daemon_, leave_atom::value);
}

caf::expected<bool> cluster_member::down(const std::string& address) {
  return ask<bool>(node_->system(), daemon_, down_atom::value, address);
}

caf::expected<bool> cluster_member::leave(const std::string& address) {
  return ask<bool>(node_->system(), daemon_, leave_atom::value, address);
}

caf::expected<bool> cluster_member::register_actor(const std::string& key,
                                                   const caf::actor& whom) {
  if (!whom)
    return caf::make_error(errc::no_such_actor,
                           "register_actor(\"" + key + "\") got no actor");
  return ask<bool>(node_->system(), daemon_, register_atom::value, key, whom);
}

caf::expected<std::vector<caf::actor>>
cluster_member::find(const std::string& key) {
  return ask<std::vector<caf::actor>>(node_->system(), daemon_,
                                      find_atom::value, key);
}

void cluster_member::subscribe(const std::string& key, const caf::actor& whom) {
  if (whom)
    caf::anon_send(daemon_, subscribe_atom::value, key, whom);
}

} // namespace ferry::detail::cluster
