// The history files of a chaos run and their parser.
//
// Every process incarnation of a chaos run writes one history file
// (history_log.hpp), one event a line: `<t_us> <event> <fields...>`, the
// parts separated by single spaces. `t_us` is CLOCK_MONOTONIC in
// microseconds, comparable across the files of one machine. Some events end
// in a free-text reason, the rest of the line (it may contain spaces). The
// events:
//
// - `start <name> <inc>`: the first line; node `name` (`n3`) began
//   incarnation `inc` (`n3-4711`, unique across the run).
// - `end`: the last line, written only when the process exits cleanly. An
//   incarnation without `end` was killed; its last line may be cut short.
// - `link <peer_name> <epoch>`: a link epoch with node `peer_name` began;
//   `epoch` is unique across the run and both ends of the link log it.
// - `down <peer_name> <reason...>`: the node was told its link to
//   `peer_name` went down.
// - `req <id> <kind> <peer_name> <epoch> <timeout_ms> <want>`: request `id`
//   (unique in the incarnation) of kind `call`, `relay`, `object` or
//   `local-object` went to `peer_name` on `epoch` (`-` and `-` for
//   `local-object`); its answer must carry checksum `want`.
// - `ans <id> ok <got>` / `ans <id> err <reason...>`: request `id`'s outcome.
// - `send <peer_name> <epoch> <seq>`: one-way message `seq` (1, 2, ... per
//   sender incarnation and epoch) went to `peer_name` on `epoch`.
// - `got <sender_inc> <epoch> <seq> <ok|bad>`: one-way message `seq` of
//   `sender_inc` on `epoch` arrived; `ok` if its payload matched its checksum.
// - `serve <from_inc> <id>`: the node's service answered request `id` of
//   incarnation `from_inc` (a relayed request under its original sender).
// - `mon <epoch> <down|exit> <reason...>`: the actor monitoring (`down`) or
//   linked to (`exit`) the peer's service on `epoch` got its message.
// - `rss <warm|end> <kb>`: resident memory in KiB after warm-up, at the end.
// - `store <objects>`: the store's object count once the workload drained.
// - `fill <bytes>` / `unfill`: a store-fill fault began / ended on the node.
// - `note <text...>`: free text, ignored by the checks.
//
// The entity members (chaos_entities.cpp) write their own histories, with
// `start`, `end`, `note` and these:
//
// - `eop <op> <key>`: operation `op` (`<inc>/<n>`, unique across the run)
//   went to account `key` (sent again after a failure, it is not logged
//   again).
// - `eack <op>` / `eerr <op> <reason...>`: the operation was acknowledged
//   (applied, and a save holding it committed) / one call of it failed.
// - `act <key> <aid>` / `deact <aid>`: activation `aid` (unique across the
//   run) of account `key` began with its state loaded / ended.
// - `apply <aid> <op>`: activation `aid` applied `op` to its state.
// - `estate <key> <count> <ops...>`: the checker read the account's stored
//   operations, in order.
//
// parse_history never throws on what it reads: a malformed line, an unknown
// event, a history that does not open with `start`, a line after `end` or a
// time that runs backwards becomes a violation of invariant `history` naming
// the file and line. A killed incarnation's last line is the one line that
// may be cut short: when a file has no `end`, a malformed last line, or a
// last line without its newline, is dropped without a word.
//
// A `history` owns its events; the functions here keep no state and may be
// called from any thread.
#pragma once

#include "violation.hpp"

#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::chaos {

/// One line of a history file.
struct event {
  /// CLOCK_MONOTONIC time of the event in microseconds.
  int64_t t_us = 0;
  /// The event's name (`req`, `ans`, ...).
  std::string kind;
  /// The fixed fields after the name, as written (for `ans`: id, `ok` or
  /// `err`, and for `ok` the checksum).
  std::vector<std::string> fields;
  /// The free-text reason of events that carry one, otherwise empty.
  std::string rest;
  /// The line's number in its file, from 1.
  size_t line_no = 0;
  /// The raw line.
  std::string text;
};

/// The events of one process incarnation, in file order.
struct history {
  /// The file it was read from.
  std::string file;
  /// Node name from the `start` line (`n3`); empty without one.
  std::string name;
  /// Incarnation id from the `start` line (`n3-4711`); empty without one.
  std::string inc;
  /// Whether the history has its `end` line (the process exited cleanly).
  bool ended = false;
  /// The well-formed events, in file order.
  std::vector<event> events;
};

/// An event and the history it is in (both owned by the caller).
struct at {
  const history* h = nullptr;
  const event* e = nullptr;
};

/// Reads one history file from `in`; `file` names it in citations.
/// Appends each problem with the file to `problems` (invariant `history`)
/// and returns what could be read. Never throws on the input's content.
history parse_history(std::istream& in, const std::string& file,
                      std::vector<violation>& problems);

/// Reads every file in `dir` whose name ends in `extension` (".history"),
/// as parse_history does each.
std::vector<history> read_histories(const std::string& dir,
                                    const std::string& extension,
                                    std::vector<violation>& problems);

/// Returns `text` as an unsigned decimal number, or nothing unless `text`
/// is one (digits only, no sign, no overflow).
std::optional<uint64_t> parse_u64(std::string_view text);

/// Returns `x`'s incarnation id, or its file name while it has none.
std::string label(const history& x);

/// Returns the citation of `e` in `x`: `file:line_no: raw text`.
std::string cite(const history& x, const event& e);

/// Appends the citation of `e` in `x` to `v`'s lines unless `v` quotes
/// `max_violation_lines` already or quotes that line already.
void quote(violation& v, const history& x, const event& e);

} // namespace ferry::chaos
