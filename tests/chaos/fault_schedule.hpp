// The faults of a chaos run, drawn from a seed.
//
// `make_schedule(seed, phase, hosts)` returns faults one after another, each
// starting 1-3 s after the one before ended, until `phase` is used up. The
// first seven are the seven kinds in an order the seed picks, so every run
// long enough for them injects each kind at least once; the rest are kinds
// drawn at random. What each kind does (chaos_test.cpp applies them):
//   kill       SIGKILL to a node; restarted after `duration`
//   partition  one or two hosts cut off from the others, both ways
//   loss       `param` % of a host's packets dropped, both ways (1-5 %)
//   delay      the delaying relay adds `param` ± 20 ms (50 ms)
//   bandwidth  a host's link cut to `param` Mbit/s both ways (10)
//   fill       a node fills its store to its bound
//   stop       SIGSTOP to a node, SIGCONT after `duration` (5 s)
// Durations are 1-10 s (partition), 3-10 s (loss, delay, bandwidth, fill),
// 1-3 s (kill), 5 s (stop). The same seed gives the same schedule.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ferry::chaos {

enum class fault_kind { kill, partition, loss, delay, bandwidth, fill, stop };

/// Number of fault kinds.
inline constexpr size_t fault_kinds = 7;

/// Returns the name of `x`, e.g. "partition".
std::string to_string(fault_kind x);

/// One fault: what, on which hosts (indexes), when and for how long.
struct fault {
  int64_t at_ms = 0;
  fault_kind kind = fault_kind::kill;
  std::vector<size_t> targets;
  int64_t duration_ms = 0;
  int param = 0;
};

/// Returns `x` on one line, e.g. "t=12.5s partition n2,n4 for 3.2s".
std::string render(const fault& x);

/// Returns the faults of `phase_ms` for `hosts` hosts drawn from `seed`.
/// `delay_host` is the host the delaying relay serves (its link is the one
/// delayed). REQUIRES: hosts >= 3.
std::vector<fault> make_schedule(uint64_t seed, int64_t phase_ms,
                                 size_t hosts, size_t delay_host);

} // namespace ferry::chaos
