// The broadcast rows: one store object sent to three ferry nodes on other
// hosts at once, against the same kind of object sent to one of them.
//
// The sender is a ferry node in this process; its objects live in the run's
// host store. The three receivers are ferry peer processes (peer.cpp), each
// with a store of its own, so ferry sees four hosts, and linked to each
// other (receiver 2 to 1, receiver 3 to 1 and 2). An object sent to all
// three is therefore relayed: the owner names, in each receiver's frame, the
// node it gave the object to before, and that receiver pulls the chunks from
// there, falling back to the owner (docs/architecture.md, "Broadcast").
//
// Every row starts its own sender node and receivers, sized for its
// payload, and stops them when it ends, removing the receivers' stores.
// Runs on the driver's main thread. This header includes no CAF header.
#pragma once

#include "matrix.hpp"
#include "runs.hpp"

#include <string>

namespace ferry::bench {

/// Number of receiving nodes of a broadcast row.
inline constexpr int broadcast_receivers = 3;

/// Returns the store name of broadcast receiver `i` (1-based), derived from
/// the tcp peers' store name: `<tcp_store_name>-r<i>`.
std::string broadcast_store_name(const std::string& tcp_store_name, int i);

/// Measures the broadcast cell `c` (tcp, a `shared_array`): one warm-up
/// run and `p.handoff_runs` timed runs, each sending one fresh object to
/// receiver 1 alone (`single_p50_us`) and another to all three at once
/// (`p50_us`: until the third answer arrived), in alternating order. Also
/// fills `owner_copies`, `relayed_bytes`, `cpu_ratio`, `cores_busy` and the
/// receivers' largest peak memory (`rss_mb`). Never throws: a failure is
/// `ok == false` and `error`.
measurement measure_broadcast(const cell& c, const run_params& p,
                              const bench_env& env);

} // namespace ferry::bench
