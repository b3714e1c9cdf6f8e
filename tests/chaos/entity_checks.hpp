// The invariants of the chaos run's entity workload (chaos_entities.cpp),
// checked over the histories of the entity members and of the checker that
// read every account at the end (history.hpp lists their events).
//
// `check_entities` returns every violation it finds, each naming its
// invariant by id:
//
// - `single-activation`: no two activations of one account apply
//   operations at overlapping times. An activation applies from its first
//   `apply` to its last (CLOCK_MONOTONIC, the same clock in every process of
//   the machine); the spans of one account's activations do not overlap. A
//   member paused past its lease may still hold an activation that applies
//   nothing: it takes no part.
// - `acknowledged-saves-durable`: every acknowledged operation is among its
//   account's stored operations at the end, and every account an
//   acknowledged operation went to was read at the end.
// - `no-double-apply`: no operation is stored twice, and each is stored
//   only in the account it was sent to.
// - `entity-order`: the operations one incarnation sent one account are
//   stored in the order sent (`<inc>/<n>`, n counting up).
// - `history`: an operation id sent twice, an `apply` of an activation that
//   never began, an `estate` whose count is not its number of operations.
//
// The functions keep no state and may be called from any thread on
// histories no thread modifies. Results own their data.
#pragma once

#include "history.hpp"
#include "violation.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ferry::chaos {

/// Returns every violation of the entity invariants in `histories`.
std::vector<violation> check_entities(const std::vector<history>& histories);

/// What the entity workload did, counted from its histories.
struct entity_summary {
  /// `eop` lines: operations sent.
  uint64_t ops = 0;
  /// `eack` lines.
  uint64_t acked = 0;
  /// `eerr` lines: calls that failed (each followed by another call).
  uint64_t failed_calls = 0;
  /// `act` lines.
  uint64_t activations = 0;
  /// `apply` lines.
  uint64_t applies = 0;
  /// `estate` lines: accounts read at the end.
  uint64_t accounts_read = 0;
  /// Operations stored at the end.
  uint64_t stored = 0;
};

/// Returns the counts of `histories`.
entity_summary summarize_entities(const std::vector<history>& histories);

/// Returns `x` on one line.
std::string render(const entity_summary& x);

} // namespace ferry::chaos
