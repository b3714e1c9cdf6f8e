// ferry-bench's vocabulary: options, the cells of the benchmark matrix and
// their results.
//
// A *cell* is one measurement: a transport, a family (or `raw-caf`, or
// `ferry` for inproc ferry rows), a payload type and size, and a pattern.
// `build_matrix` turns the options into the ordered list of cells to run and
// the list of impossible cells with the reason each is skipped. This header
// includes no CAF header, so light translation units can use it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ferry::bench {

/// Where the two actors live. `tls` is `tcp` over TLS links (both nodes
/// with ferry.tls set); its rows are compared with the plain ferry `tcp` row
/// of the same family, type, size and pattern and with the `tls-socket`
/// row of their size and pattern, and run in the tcp sets.
/// `netns` is `tcp` between hosts of their own: every node in a network
/// namespace, its link shaped to `options::host_link_mbit` each way
/// (emulated_hosts.hpp): broadcast rows, and byte arrays one way beside the
/// socket over the same link (no CAF baselines).
enum class transport { inproc, ipc, tcp, tls, netns };

/// Returns `tcp` for `tls`, else `x`: the transport whose sets a row joins.
inline transport set_transport(transport x) {
  return x == transport::tls ? transport::tcp : x;
}

/// What the sender does.
enum class pattern { oneway, pingpong, handoff, broadcast };

/// Returns true for the patterns measured at once, each row on its own
/// (handoff, broadcast): no set, no CAF baseline, no limit row.
inline bool is_one_shot(pattern x) {
  return x == pattern::handoff || x == pattern::broadcast;
}

/// What a message carries.
enum class payload_type { bytes, record, shared_array };

std::string to_string(transport x);
std::string to_string(pattern x);
std::string to_string(payload_type x);

/// The baseline family: plain CAF, no ferry at all, on CAF's defaults.
inline const std::string raw_caf = "raw-caf";

/// The second baseline: plain CAF given the scheduler settings a ferry node
/// sets (copied from a default `ferry::node_config`) and fixed middleman
/// settings (support/ferry_caf_settings.hpp).
inline const std::string raw_caf_tuned = "raw-caf-tuned";

/// The physical limit of tcp sets: a blocking TCP socket pair on loopback
/// between two processes, no actors (limit_runs.cpp).
inline const std::string socket_limit = "socket";

/// The limit of the tls rows: the same socket pair with OpenSSL's TLS 1.3
/// over it (limit_runs.cpp). Its rows are `tls` rows and run in the tcp
/// sets.
inline const std::string tls_socket_limit = "tls-socket";

/// The physical limit of ipc sets: one warm memcpy of the payload size.
inline const std::string memcpy_limit = "memcpy";

/// Returns true for the CAF baselines (either).
inline bool is_caf_family(const std::string& family) {
  return family == raw_caf || family == raw_caf_tuned;
}

/// Returns true for the limit rows (socket, tls-socket, memcpy).
inline bool is_limit_family(const std::string& family) {
  return family == socket_limit || family == tls_socket_limit
         || family == memcpy_limit;
}

/// Returns the limit family of a transport's rows ("" for none).
inline std::string limit_family_of(transport tr) {
  return tr == transport::tcp || tr == transport::netns ? socket_limit
         : tr == transport::tls                         ? tls_socket_limit
         : tr == transport::ipc                         ? memcpy_limit
                                                        : std::string{};
}

/// The family reported for ferry rows in one process (plain CAF, no encoding).
inline const std::string inproc_ferry = "ferry";
/// Appended to a ferry row's family (`cereal.binary+metrics`) by `--metrics`:
/// the same row with the Prometheus endpoint on in both nodes.
inline const std::string metrics_suffix = "+metrics";

/// Returns the built-in families in the order the table lists them.
std::vector<std::string> builtin_families();

/// Returns every payload size of the full matrix (64 B ... 1 GiB).
const std::vector<uint64_t>& matrix_sizes();

/// Returns the payload sizes of the quick matrix (64 B, 4 KiB, 1 and 64 MiB).
const std::vector<uint64_t>& quick_sizes();

/// Returns "64 B", "4 KiB", "1 MiB", ...
std::string size_label(uint64_t bytes);

/// Parses "64", "64B", "4K", "4KiB", "1M", "64MiB", "1G".
std::optional<uint64_t> parse_size(const std::string& text);

/// Command-line options.
struct options {
  /// Quick mode (what `bash dev.sh bench` runs): a subset, short windows.
  bool quick = false;
  /// Filters: empty means every value.
  std::vector<std::string> transports;
  std::vector<std::string> families;
  std::vector<uint64_t> payloads;
  std::vector<std::string> patterns;
  std::vector<std::string> types;
  /// Output files ("" for none).
  std::string json;
  std::string plot;
  /// Seconds of measurement per cell (0: the mode's default).
  double seconds = 0;
  /// Rounds per cell (0: the default, 5).
  int rounds = 0;
  /// Number of hand-off runs (0: the mode's default).
  int handoff_runs = 0;
  /// Print the cells and exit.
  bool list = false;
  /// Run every ferry row a second time with the metrics endpoint on.
  bool metrics = false;
  /// Each emulated host's link rate, each way (`netns` rows; Mbit/s).
  uint64_t host_link_mbit = 1000;
  /// The load program instead of the matrix (load_runs.hpp), its client
  /// processes, offered rates (empty: the mode's) and step time (0: the
  /// mode's).
  bool load = false;
  int load_clients = 2;
  std::vector<double> load_rates;
  double load_step_seconds = 0;
  /// The entity program instead of the matrix (entity_runs.hpp), and how
  /// many keys it asks.
  bool entities = false;
  uint64_t entity_keys = 10'000;
};

/// Parses `argv`; prints usage and returns nothing on `--help` or an error
/// (`exit_code` says which).
std::optional<options> parse_options(int argc, char** argv, int& exit_code);

/// One measurement to make.
struct cell {
  transport tr = transport::inproc;
  std::string family;
  payload_type type = payload_type::bytes;
  uint64_t size = 0;
  pattern pat = pattern::oneway;

  /// Returns e.g. "ipc cereal.binary bytes 1 MiB oneway".
  std::string label() const;

  /// Returns true for the baseline row of this cell's (transport, size,
  /// pattern): raw-caf sending bytes. It opens every round of its set.
  bool is_baseline() const {
    return family == raw_caf && type == payload_type::bytes;
  }

  /// Returns true for the rows others are divided by: either CAF baseline
  /// sending bytes, and the limit rows (the tls-socket row too).
  bool is_reference() const {
    return (is_caf_family(family) && type == payload_type::bytes)
           || is_limit_family(family);
  }

  /// Returns the payload type CAF sends in the baseline of this row: the
  /// row's own, bytes for a shared_array (CAF has no store).
  payload_type caf_type() const {
    return type == payload_type::shared_array ? payload_type::bytes : type;
  }

  /// Returns the plain ferry row a `tls` row is compared with.
  cell plain_twin() const {
    return {transport::tcp, family, type, size, pat};
  }
};

/// A cell that cannot be measured, and why.
struct skipped_cell {
  cell c;
  std::string reason;
};

/// The cells to run, in order, and the skipped ones.
struct matrix {
  std::vector<cell> cells;
  std::vector<skipped_cell> skipped;
};

/// Builds the matrix of the mode, filtered by the options.
matrix build_matrix(const options& opts);

/// What one cell measured.
struct result {
  cell c;
  bool ok = false;
  /// Why the cell failed (when `!ok`).
  std::string error;
  uint64_t messages = 0;
  double seconds = 0;
  double msgs_per_s = 0;
  double mb_per_s = 0;
  /// Latency in microseconds: round trips (pingpong), send to ack under a
  /// full window (oneway), hand-off time (handoff), time until the last of
  /// three receivers answered (broadcast).
  double p50_us = 0;
  double p99_us = 0;
  /// msgs_per_s of raw-caf sending the same payload type (bytes for a
  /// shared_array), same transport, size and pattern; 0 when none.
  double baseline_msgs_per_s = 0;
  /// msgs_per_s / baseline_msgs_per_s (0 when no baseline).
  double ratio = 0;
  /// The same against raw-caf-tuned (CAF given ferry's settings).
  double tuned_msgs_per_s = 0;
  double ratio_tuned = 0;
  /// ipc, tcp, tls and netns rows: against the limit row of the same
  /// transport, size and pattern (memcpy, socket, tls-socket): oneway
  /// msgs_per_s over the limit's, pingpong the limit's p50 round trip over
  /// the row's (1.0 = at the limit); negative when none.
  double ratio_to_limit = -1;
  /// Peak resident memory of the receiving process (MiB), without the pages
  /// of the host store it maps; negative when unknown.
  double receiver_peak_rss_mb = -1;
  /// msgs_per_s of each round (oneway and pingpong; the median is
  /// msgs_per_s), so a reader sees how much the machine varied.
  std::vector<double> round_msgs_per_s;
  /// Hand-off rows: one warm memcpy of the same size (µs).
  double memcpy_us = -1;
  /// Hand-off rows: p50 of handing the same object off again at once (µs);
  /// negative when not measured. See README.md ("handoff").
  double resend_p50_us = -1;
  /// Hand-off rows: p50 of a 64 B message sent the same way, after the same
  /// quiet as the hand-off, and right after the resend (µs); negative when
  /// not measured.
  double small_p50_us = -1;
  double small_resend_p50_us = -1;
  /// Broadcast rows (see README.md, "broadcast"): p50 of sending an object
  /// to one receiving node (µs), negative when not measured; p50_us over it.
  double single_p50_us = -1;
  double broadcast_ratio = -1;
  /// Broadcast rows: bytes the owner served during the timed broadcast runs
  /// over payload size times their number; negative when not measured.
  double owner_copies = -1;
  /// Broadcast rows: bytes the receivers pulled from each other per
  /// broadcast object (mean over the timed runs); negative when unknown.
  double relayed_bytes = -1;
  /// Broadcast rows: CPU time of the sender's and the receivers' processes
  /// during the timed broadcast runs over that during the single runs;
  /// negative when unknown.
  double cpu_ratio = -1;
  /// Broadcast rows: CPU seconds of those processes per second of the timed
  /// broadcast runs (2.0 = both cores of a 2-core machine); negative when
  /// unknown.
  double cores_busy = -1;
  /// netns rows: each emulated host's link rate, each way (Mbit/s); 0 for
  /// the others.
  uint64_t host_link_mbit = 0;
};

/// Parameters of one run, derived from the cell and the mode.
struct run_params {
  /// Messages a oneway sender keeps unacknowledged at most.
  uint64_t window = 1;
  /// The receiver acknowledges every `ack_every` messages.
  uint64_t ack_every = 1;
  /// Warm-up time before measuring (seconds) and its minimum message count.
  double warmup_seconds = 0.05;
  uint64_t warmup_messages = 1;
  /// Measurement: `repeats` rounds of at least `seconds / repeats` and
  /// `min_messages` messages each, taking turns with the other cells of the
  /// same baseline; the median rate is reported.
  double seconds = 0.3;
  int repeats = 5;
  uint64_t min_messages = 2;
  /// When the warm-up shows that the messages of `repeats` rounds (each at
  /// least `min_messages`, rounded up to whole acknowledgement batches for
  /// oneway, plus the untimed ones of `warm_each_round`) would take longer
  /// than this, one round of one message (or acknowledgement batch) is
  /// measured instead. A cell within three times the budget measures one
  /// more warm-up message first. Baselines get ten times the budget.
  double slow_cell_seconds = 10;
  /// Send untimed messages at the start of every round (a window's worth
  /// for oneway, one round trip for pingpong), so the round's timed messages
  /// follow their own row instead of whatever the previous row left the
  /// memory in.
  bool warm_each_round = false;
  /// Hand-off and broadcast runs (p50 reported), after one warm-up run.
  int handoff_runs = 5;
  /// Give up on a reply after this long.
  double timeout_seconds = 120;
};

/// Returns the run parameters of `c` in the mode of `opts`.
run_params params_for(const cell& c, const options& opts);

} // namespace ferry::bench
