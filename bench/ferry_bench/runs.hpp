// Groups of runs: one sender side and one receiver side, kept alive while
// the cells of one transport run.
//
// A *group* is either plain CAF (`make_caf_group`: the raw-caf baseline) or
// ferry with one family (`make_ferry_group`). For ipc and tcp a group starts
// its peer process (ferry-bench in peer mode, see peer.cpp) and connects to
// it; inproc groups keep both actors in this process. `run` measures one cell
// and returns its figures, or the reason it failed. Groups throw
// std::runtime_error from their factory when they cannot start.
//
// This header includes no CAF header.
#pragma once

#include "matrix.hpp"

#include <memory>
#include <string>

namespace ferry::bench {

/// Figures of one cell, as measured by a group.
struct measurement {
  bool ok = false;
  std::string error;
  uint64_t messages = 0;
  double seconds = 0;
  double msgs_per_s = 0;
  double p50_us = 0;
  double p99_us = 0;
  /// Peak resident memory of the receiving process (MiB), without the pages
  /// of the host store it maps; negative when unknown.
  double rss_mb = -1;
};

/// Where the stores live, shared by every group of one run.
struct bench_env {
  /// Host store of this process, and of ipc peers (same name: shared).
  std::string store_name;
  uint64_t store_capacity = 0;
  /// Store of tcp peers: another name, so ferry takes the cross-host path.
  std::string tcp_store_name;
  uint64_t tcp_store_capacity = 0;
};

class group {
public:
  virtual ~group() = default;

  /// Measures `c` with the parameters `p`.
  virtual measurement run(const cell& c, const run_params& p) = 0;
};

/// Plain CAF (actor_system + middleman publish/remote_actor); no ferry.
std::unique_ptr<group> make_caf_group(transport tr, const bench_env& env);

/// ferry with `family` as the only serializer and deserializer on both
/// nodes (ignored for inproc: one process never encodes).
std::unique_ptr<group> make_ferry_group(transport tr, const std::string& family,
                                        const bench_env& env);

/// The peer process: `ferry-bench --peer=caf|ferry [CAF and ferry flags]`.
int peer_main(int argc, char** argv);

} // namespace ferry::bench
