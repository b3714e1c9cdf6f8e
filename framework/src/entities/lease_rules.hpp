// lease_rules: who may take a shard, decided from its stored row and the
// database's clock.
//
// Both stores read a shard's row and the database's time inside one
// transaction that locks the row (SQLite: BEGIN IMMEDIATE; PostgreSQL:
// SELECT ... FOR UPDATE), ask `decide_acquire`, write the row it returns and
// commit, so that two owners asking at once are decided one after the
// other. Times are milliseconds since 1970 on the database's clock.
//
// A row: `holder` is the owner that took the shard last ("" if none did),
// `expires_ms` when its lease runs out (a release sets it to the release's
// time), `hand_to` the owner a release handed the shard to ("" if none),
// `released_ms` when. The holder holds the shard while now < expires_ms.
//
// Thread-safety: functions only; no state.
#pragma once

#include "entities/state_store.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace ferry::detail::entities {

/// A shard's lease as both stores keep it.
struct lease_row {
  std::string holder;
  uint64_t epoch = 0;
  int64_t expires_ms = 0;
  std::string hand_to;
  int64_t released_ms = 0;
};

/// What `acquire` answers and, when the lease changes, the row to write.
struct lease_decision {
  lease_grant grant;
  std::optional<lease_row> write;
};

/// Decides `owner`'s acquire of a shard whose row is `row` at `now_ms`.
/// A never-held shard has the row `lease_row{}`.
/// REQUIRES: ttl and grace checked (check_lease_times).
lease_decision decide_acquire(const lease_row& row, int64_t now_ms,
                              const std::string& owner,
                              std::chrono::milliseconds ttl,
                              std::chrono::milliseconds hand_off_grace);

} // namespace ferry::detail::entities
