// exposition: a node's figures in Prometheus' text exposition format.
//
// Rendered only when a client asks (a scrape), from snapshots: the link
// counters' `link_stats`, the node's peers, the host store's summary, the
// process' resident memory, the node's view of its cluster and what its
// entities do.
// docs/monitoring.md lists every metric and its meaning; this file is where
// they are named.
//
// Thread-safety: plain functions on values.
#pragma once

#include "ferry/cluster_events.hpp"
#include "ferry/entities.hpp"
#include "ferry/link_stats.hpp"
#include "ferry/node_events.hpp"

#include "ferry/store/store_totals.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ferry::detail {

/// What a scrape shows of a node's cluster (cluster/published_view.hpp).
struct cluster_figures {
  /// The members as the node sees them.
  std::vector<member_info> members;
  /// phi of each member the node watches, by incarnation.
  std::map<uint64_t, double> phi;
  /// How long the last change of the view took to reach every reachable
  /// member (0 before the first convergence).
  double convergence_seconds = 0;
  /// The leader's incarnation (none while no member is up).
  std::optional<uint64_t> leader;
  /// Whether every reachable member has seen the current view.
  bool converged = false;
  /// The cluster's name and this node's incarnation in it.
  std::string name;
  uint64_t self = 0;
};

/// What a scrape shows of one node.
struct node_figures {
  /// The node's name.
  std::string node_name;
  /// Every link's counters.
  std::vector<link_stats> links;
  /// Every peer the node has had a link to.
  std::vector<peer_state> peers;
  /// The host store's figures, if the node has a store.
  std::optional<store::store_totals> store;
  /// The process' resident memory in bytes.
  uint64_t resident_bytes = 0;
  /// The node's cluster, if it joins one.
  std::optional<cluster_figures> cluster;
  /// The node's entities, if it hosts them.
  std::optional<entity_stats> entities;
};

/// Returns `x` in Prometheus' text exposition format (version 0.0.4).
std::string render_exposition(const node_figures& x);

/// Returns the resident memory of this process in bytes (from
/// /proc/self/statm; 0 where that cannot be read).
uint64_t resident_memory_bytes();

} // namespace ferry::detail
