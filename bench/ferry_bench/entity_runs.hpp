// The entity program (`ferry-bench --entities`): what sharded entities cost
// beside a plain remote actor, in one run.
//
// Every node runs in this process, each with its own actor system, linked
// over loopback TCP (ferry's own transport, as between hosts) in one
// cluster. A client node that hosts no entities asks; the others host them,
// their state in an SQLite file or a PostgreSQL database (a throwaway
// server this run starts, as the tests do; its rows carry the reason when
// none can start). The figures:
//
// - `round_trip`: 64 B-sized requests one after the other from the client
//   to an active entity and to a plain actor published on the same member;
//   p50 and p99 of each, and the entity's rate over the plain actor's;
// - `activation`: the first request to each of `activation_keys` new keys
//   (the entity loads its state before it answers): p50 and p99;
// - `throughput`: `keys` entities asked with up to `window` requests in
//   flight, without state and with a save per request (SQLite, PostgreSQL):
//   requests a second while they activate (first pass) and once active;
// - `rebalance`: `keys` active entities on four hosting members; a fifth
//   joins: the time until the shards have settled on five members and every
//   key answered again.
//
// Thread-safety: run from the main thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ferry::bench {

/// One figure of the entity program.
struct entity_row {
  /// "round_trip", "activation", "throughput" or "rebalance".
  std::string what;
  /// "none" (stateless), "sqlite" or "postgresql".
  std::string store;
  /// What `value` is, e.g. "p50_us", "requests_per_s".
  std::string figure;
  double value = 0;
  /// The plain remote actor's same figure, where there is one (else 0).
  double baseline = 0;
  /// Why the row has no figure; empty when it ran.
  std::string error;
};

struct entity_options {
  uint64_t keys = 10'000;
  uint64_t activation_keys = 1'000;
  uint64_t round_trips = 5'000;
  uint64_t window = 256;
};

/// Runs the entity program.
std::vector<entity_row> measure_entities(const entity_options& opts);

} // namespace ferry::bench
