// The load program: the rate a request/response service holds.
//
// `measure_load` runs, per transport (tcp, ipc) and system (ferry with the
// `caf` and with the `cereal.binary` family, plain CAF given ferry's
// settings), one server process (`--peer=ferry|caf-tuned`, its sink answers
// each 64 B request with a `uint64_t`) and `clients` client processes
// (`--load-client=...`, load_client.cpp), and steps the offered rate up.
// Beside them the `socket` set is the machine's limit: an epoll server and
// clients on plain loopback sockets, no framework (load_socket.hpp); it
// runs once, and both transports' sets are read against it. The steps:
// at each step every client requests at its share of the rate on a fixed
// schedule for the step's time, and the step's figures are the merged
// latencies (p50, p99, p99.9, max, from each request's scheduled time),
// the answered rate and the errors. A set stops stepping once a step is far
// past its limit. `held_rate` is the highest offered rate whose step had a
// p99 of at most 10 ms, no error and at least 95 % of its requests
// answered in time. After the given rates, steps 10 % apart run from the
// highest rate held up to the first given rate above it that was not held,
// until one is not held, so the limit is known to within 10 %. Each step also measures the server process's CPU time
// (utime + stime from /proc) per answered request. Plain CAF has no
// same-host path: its ipc set runs over loopback TCP as its tcp set does.
#pragma once

#include "runs.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ferry::bench {

struct load_step {
  double offered = 0;  // requests a second, all clients together
  double achieved = 0; // answered requests a second
  uint64_t sent = 0;
  uint64_t ok = 0;
  uint64_t errors = 0;
  double p50_us = 0;
  double p99_us = 0;
  double p999_us = 0;
  double max_us = 0;
  /// The server's CPU time per answered request (µs); negative when
  /// unknown.
  double server_cpu_us = -1;
};

struct load_set {
  std::string transport; // "tcp" or "ipc"
  std::string system;    // "ferry", "raw-caf-tuned" or "socket"
  std::string family;    // ferry's family; "" for CAF
  int clients = 0;
  std::vector<load_step> steps;
  /// The highest offered rate held (see above); 0 when none was.
  double held_rate = 0;
  /// Why the set could not run; empty when it ran.
  std::string error;
};

/// The latency a held step may not exceed at p99 (µs).
inline constexpr double load_p99_bound_us = 10'000;

struct load_options {
  int clients = 2;
  std::vector<double> rates;
  double step_seconds = 1;
};

/// The default rates of a mode (requests a second, all clients).
std::vector<double> default_load_rates(bool quick);

std::vector<load_set> measure_load(const bench_env& env,
                                   const load_options& opts);

/// The client process's entry (load_client.cpp).
int load_client_main(int argc, char** argv);

/// A client's stdin protocol (load_client.cpp): prints "ready", then runs
/// `step(rate, millis)` for each "step <rate> <millis>" line and prints
/// "done <what it returned>", until stdin closes.
void serve_step_commands(
  const std::function<std::string(double, uint64_t)>& step);

} // namespace ferry::bench
