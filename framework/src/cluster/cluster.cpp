// cluster: the public face of a node's cluster (see ferry/cluster.hpp);
// what a member does is cluster_member's (cluster/cluster_member.hpp).
#include "ferry/cluster.hpp"

#include "cluster/cluster_member.hpp"
#include "member_host.hpp"

#include "ferry/errc.hpp"

namespace ferry {

namespace detail {

member_host::~member_host() = default;

} // namespace detail

namespace {

caf::error no_cluster(const std::string& name) {
  return caf::make_error(errc::cluster_refused,
                         "node " + name +
                           " joins no cluster (ferry.cluster.name)");
}

} // namespace

caf::expected<std::unique_ptr<cluster>>
cluster::start(detail::member_host& host, const cluster_config& cfg) {
  std::unique_ptr<detail::cluster::cluster_member> member;
  if (cfg.enabled()) {
    auto made = detail::cluster::cluster_member::start(host, cfg);
    if (!made)
      return std::move(made.error());
    member = std::move(*made);
  }
  return std::unique_ptr<cluster>{
    new cluster(host.node_name(), std::move(member))};
}

cluster::cluster(std::string node_name,
                 std::unique_ptr<detail::cluster::cluster_member> member)
  : node_name_(std::move(node_name)),
    member_(std::move(member)) {
  // nop
}

cluster::~cluster() = default;

std::vector<member_info> cluster::members() const {
  return member_ ? member_->members() : std::vector<member_info>{};
}

void cluster::watch_members(const caf::actor& whom) {
  if (member_)
    member_->watch(whom);
}

void cluster::unwatch_members(const caf::actor& whom) {
  if (member_)
    member_->unwatch(whom);
}

void cluster::leave() {
  if (member_)
    member_->leave();
}

caf::expected<bool> cluster::down_member(const std::string& address) {
  if (!member_)
    return no_cluster(node_name_);
  return member_->down(address);
}

caf::expected<bool> cluster::register_actor(const std::string& key,
                                            const caf::actor& whom) {
  if (!member_)
    return no_cluster(node_name_);
  return member_->register_actor(key, whom);
}

caf::expected<std::vector<caf::actor>>
cluster::find_actors(const std::string& key) {
  if (!member_)
    return no_cluster(node_name_);
  return member_->find(key);
}

void cluster::subscribe_actors(const std::string& key, const caf::actor& whom) {
  if (member_)
    member_->subscribe(key, whom);
}

} // namespace ferry
