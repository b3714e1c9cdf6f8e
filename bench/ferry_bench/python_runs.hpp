// The Python rows: round trips from a Python client, a sanity figure beside
// the matrix (not a target).
//
// `measure_python` runs bench/python/rr_client.py with Debian's python3
// twice against peers of this program: once linking to a ferry peer as a
// Python peer (framework/python/ferry, family msgpack, over loopback, the
// tcp path) and requesting its sink with 64 B byte arrays, once sending the
// same round trip over a plain socket to the socket peer from Python's own
// `socket` module. Each row holds the client's rounds and latencies, or why
// it could not run (no python3, no python3-msgpack, a failing client).
#pragma once

#include "runs.hpp"

#include <string>
#include <vector>

namespace ferry::bench {

struct python_row {
  /// "python-ferry" or "python-socket".
  std::string client;
  uint64_t payload_bytes = 64;
  double msgs_per_s = 0;
  double p50_us = 0;
  double p99_us = 0;
  std::vector<double> round_msgs_per_s;
  /// Empty when measured.
  std::string error;
};

/// Whether the run's filters select the Python rows (tcp, pingpong, 64 B
/// byte arrays, or the family `python`).
bool python_selected(const options& opts);

/// Measures both Python rows (`seconds` of round trips each, in `rounds`).
std::vector<python_row> measure_python(const bench_env& env, double seconds,
                                       int rounds);

} // namespace ferry::bench
