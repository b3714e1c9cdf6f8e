// cluster_config: how a node finds and keeps its cluster (`ferry.cluster.*`).
//
// A node whose `name` is set joins a cluster of that name when it starts: it
// listens at `address`, asks the seeds in turn to let it in, and, when it is
// the first seed of the list and no seed answers within `seed_timeout`,
// forms the cluster itself (only the first seed may, so two seeds never form
// two clusters). From then on it gossips the membership view every
// `gossip_interval`, watches up to `monitored_by` members with heartbeats
// and a phi-accrual failure detector, and applies `downing` once members
// have been unreachable for `stable_after` (docs/cluster.md).
//
// Every field has a default that matches Akka's where Akka has one; a config
// file sets them under `[ferry.cluster]`, flags as
// `--ferry.cluster.seeds=...`.
//
// Thread-safety: a value type.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ferry {

struct cluster_config {
  /// The cluster's name; empty: the node joins no cluster. Nodes of
  /// another name are refused.
  std::string name;
  /// Where this node listens and others reach it ("host:port"); required
  /// with `name`.
  std::string address;
  /// Nodes to join through ("host:port", in order); this node's own
  /// address may be among them.
  std::vector<std::string> seeds;
  /// How long the first seed waits for another seed before it forms the
  /// cluster, and how long others wait between rounds of asking.
  std::chrono::milliseconds seed_timeout{5000};
  /// How often a member sends its view to another.
  std::chrono::milliseconds gossip_interval{1000};
  /// How often a member sends heartbeats to those it watches.
  std::chrono::milliseconds heartbeat_interval{1000};
  /// phi at which a watched member is unreachable.
  double phi_threshold = 8.0;
  /// A heartbeat pause this long costs no phi.
  std::chrono::milliseconds acceptable_pause{3000};
  /// How many members watch each member.
  size_t monitored_by = 5;
  /// "none", "keep-majority" or "keep-oldest".
  std::string downing = "keep-majority";
  /// How long the set of unreachable members must stay the same before the
  /// downing policy acts.
  std::chrono::milliseconds stable_after{10000};

  /// Returns whether the node joins a cluster.
  bool enabled() const { return !name.empty(); }
};

} // namespace ferry
