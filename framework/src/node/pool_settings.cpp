// pool_settings: the vector pool's limits across the nodes of a process
// (see node/pool_settings.hpp).
#include "node/pool_settings.hpp"

#include "thread_safety.hpp"

#include <cstddef>

namespace ferry::detail {

namespace {

/// How many running nodes set limits, and which node set the limits in
/// force (it may have stopped since).
struct pool_setter {
  mutex mtx;
  size_t live_nodes FERRY_GUARDED_BY(mtx) = 0;
  std::string node_name FERRY_GUARDED_BY(mtx);
  serializers::vector_pool_limits limits FERRY_GUARDED_BY(mtx);
};

pool_setter& setter() {
  static pool_setter instance;
  return instance;
}

} // namespace

pool_settings::pool_settings(
  const serializers::vector_pool_limits& limits, const std::string& node_name,
  const std::function<void(const std::string&)>& log) {
  auto& owner = setter();
  lock_guard guard{owner.mtx};
  if (owner.live_nodes > 0 && owner.limits != limits)
    log("warning: this node's ferry.vector-pool settings differ from the "
        "limits in force in this process (set by node " +
        owner.node_name +
        " when it started); the pool is process-wide, so this node's "
        "settings now apply to every node of the process (give them all "
        "the same ferry.vector-pool settings)");
  serializers::vector_pool_config(limits);
  owner.limits = limits;
  owner.node_name = node_name;
  ++owner.live_nodes;
}

pool_settings::~pool_settings() {
  auto& owner = setter();
  lock_guard guard{owner.mtx};
  --owner.live_nodes;
}

} // namespace ferry::detail
