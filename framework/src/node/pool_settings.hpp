// pool_settings: a node's share in the process-wide vector pool's limits.
//
// The vector pool (serializers/vector_pool.hpp) serves the whole process:
// one set of limits applies to every node in it. A node applies its
// `ferry.vector-pool` settings when it starts; a node whose settings differ
// from those a running node set says so in its log (naming that node)
// instead of changing them silently. The record of who set the limits is
// process-wide state by nature, like the pool itself.
//
// Thread-safety: nodes may start and stop on any threads at once.
#pragma once

#include "ferry/serializers/vector_pool.hpp"

#include <functional>
#include <string>

namespace ferry::detail {

class pool_settings {
public:
  /// Applies `limits` for the node `node_name`, logging through `log` when
  /// a running node set other limits.
  pool_settings(const serializers::vector_pool_limits& limits,
                const std::string& node_name,
                const std::function<void(const std::string&)>& log);

  /// Counts the node as stopped.
  ~pool_settings();

  pool_settings(const pool_settings&) = delete;
  pool_settings& operator=(const pool_settings&) = delete;
};

} // namespace ferry::detail
