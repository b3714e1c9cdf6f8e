// Groups of runs: one sender side and one receiver side, kept alive while
// the cells of one transport run.
//
// A *group* is either plain CAF (`make_caf_group`: the raw-caf baseline) or
// ferry with one family (`make_ferry_group`). For ipc and tcp a group starts
// its peer process (ferry-bench in peer mode, see peer.cpp) and connects to
// it; inproc groups keep both actors in this process. `start` prepares a
// *trial* of one oneway or pingpong cell, which main.cpp warms up and then
// runs round by round in turn with the other cells of its set; `handoff`
// measures a hand-off cell at once. Broadcast cells need four nodes and have
// no group (broadcast_runs.hpp). Groups throw std::runtime_error from
// their factory when they cannot start.
//
// This header includes no CAF header.
#pragma once

#include "matrix.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

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
  /// The rate of each round, in the order they ran (oneway and pingpong).
  std::vector<double> round_rates;
  /// Hand-off rows: p50 of sending each object a second time, right after
  /// its first hand-off (µs), and of a 64 B message sent after the same
  /// quiet as the hand-off and right after the resend; negative when not
  /// measured (see ferry_runs.cpp).
  double resend_p50_us = -1;
  double small_p50_us = -1;
  double small_resend_p50_us = -1;
  /// Broadcast rows (broadcast_runs.hpp): p50 of sending an object to one
  /// receiving node (µs), the owner's copies per broadcast object, the
  /// bytes relayed among the receivers per object, the CPU time of a
  /// broadcast over a single transfer's, and the cores the four processes
  /// kept busy during the broadcasts; negative when not measured.
  double single_p50_us = -1;
  double owner_copies = -1;
  double relayed_bytes = -1;
  double cpu_ratio = -1;
  double cores_busy = -1;
};

/// Where the stores live, shared by every group of one run.
struct bench_env {
  /// Host store of this process, and of ipc peers (same name: shared).
  std::string store_name;
  uint64_t store_capacity = 0;
  /// Store of tcp peers: another name, so ferry takes the cross-host path.
  std::string tcp_store_name;
  uint64_t tcp_store_capacity = 0;
  /// Certificates of tls rows, made by make_test_pki.sh as their groups
  /// start (empty: no tls row).
  std::string pki_dir;
  /// netns rows: each emulated host's link rate, each way (Mbit/s).
  uint64_t host_link_mbit = 1000;
  /// Where the peer process of a two-process row listens, and the
  /// arguments that put it there (after `--peer=...`): loopback, or for
  /// netns sets host 1 (`--netns=<path>`; main.cpp sets both).
  std::string peer_address = "127.0.0.1";
  std::vector<std::string> peer_place;
};

/// One oneway or pingpong cell being measured in rounds. The cells compared
/// with one baseline take turns round by round (see main.cpp), so a slow
/// phase of the machine hits all of them alike.
class trial {
public:
  virtual ~trial() = default;

  /// Warms up and works out how many rounds the cell takes; false on
  /// failure (the reason is in `result().error`).
  virtual bool warm_up() = 0;

  /// Returns the number of rounds the cell takes (valid after `warm_up`).
  virtual int rounds() const = 0;

  /// Measures one round; false on failure.
  virtual bool round() = 0;

  /// Returns the figures of the rounds so far (median rate, latency
  /// quantiles over every round), or the failure.
  virtual measurement result() = 0;
};

class group {
public:
  virtual ~group() = default;

  /// Prepares measuring `c` (oneway or pingpong) with the parameters `p`;
  /// throws std::runtime_error when the cell cannot be prepared.
  virtual std::unique_ptr<trial> start(const cell& c, const run_params& p) = 0;

  /// Measures a hand-off cell.
  virtual measurement handoff(const cell& c, const run_params& p) = 0;
};

/// Drops the payload messages cached for the cells of one set (see
/// main.cpp), so a run holds at most one size's payloads.
void clear_payload_cache();

/// Plain CAF (actor_system + middleman publish/remote_actor); no ferry.
/// `tuned`: with a ferry node's scheduler settings and fixed middleman
/// settings (support/ferry_caf_settings.hpp).
std::unique_ptr<group> make_caf_group(transport tr, bool tuned,
                                      const bench_env& env);

/// The limit row of `tr`: a plain socket pair (tcp, netns), TLS over one
/// (tls) or one memcpy (ipc); see limit_runs.cpp.
std::unique_ptr<group> make_limit_group(transport tr, const bench_env& env);

/// ferry with `family` as the only serializer and deserializer on both
/// nodes (ignored for inproc: one process never encodes).
std::unique_ptr<group> make_ferry_group(transport tr, const std::string& family,
                                        const bench_env& env);

/// The peer process: `ferry-bench --peer=caf|caf-tuned|ferry|socket|tls-socket
/// [CAF and ferry flags]`.
int peer_main(int argc, char** argv);

/// The commands only a ferry peer serves (see peer.cpp); a peer without
/// them answers each with an error.
struct ferry_peer_commands {
  /// `connect <host> <port>`: links this node to the node at
  /// <host>:<port>; returns "" on success, else why not.
  std::function<std::string(const std::string&, uint16_t)> connect;
  /// `relayed`: returns the bytes this node pulled from other receivers'
  /// copies of store objects (`bytes_relayed_by_peer` over its links).
  std::function<uint64_t()> relayed;
};

/// Serves a peer's commands on stdin until it closes: `reset` calls
/// `reset_receiver`, `connect` and `relayed` go to `ferry` (see peer.cpp).
int serve_commands(const std::function<bool(uint64_t)>& reset_receiver,
                   const ferry_peer_commands& ferry = {});

/// The socket peer (limit_runs.cpp).
int socket_peer_main(const std::string& address);

/// The tls-socket peer (limit_runs.cpp); `argv` holds its certificate, key
/// and CA (`--certificate=`, `--key=`, `--ca-file=`).
int tls_socket_peer_main(int argc, char** argv, const std::string& address);

} // namespace ferry::bench
