// One finding of the chaos run's checker: a broken invariant, or a history
// file that could not be read as written (invariant `history`).
//
// A plain value: it owns its strings and refers to no history, so it
// outlives the histories it was found in. parse_history (history.hpp)
// reports parse problems as violations and check (invariants.hpp) reports
// the rest; render (invariants.hpp) prints one. Not synchronized: share a
// violation between threads only for reading.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ferry::chaos {

/// The most history lines a violation quotes.
inline constexpr size_t max_violation_lines = 12;

/// One broken invariant and the history lines that show it.
struct violation {
  /// The invariant's id: `answered-once`, `within-timeout`, `typed-error`,
  /// `checksum`, `no-duplicates`, `per-pair-order`, `monitors`,
  /// `store-drains`, `rss` or `history` (invariants.hpp says what each
  /// requires).
  std::string invariant;
  /// One sentence naming the incarnation, the request, epoch or sequence
  /// number, and the numbers involved.
  std::string what;
  /// The history lines that show it, the most relevant first, each as
  /// `file:line_no: raw text`; at most `max_violation_lines`.
  std::vector<std::string> lines;
};

} // namespace ferry::chaos
