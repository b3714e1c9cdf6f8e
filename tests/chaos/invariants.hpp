// The invariants a chaos run must keep, checked over the histories of all
// its process incarnations (history.hpp).
//
// `check` reads the histories and returns every violation it finds, each
// naming its invariant by id:
//
// - `answered-once`: each `req` id of an incarnation is sent once and has
//   exactly one `ans` (at most one in a killed incarnation); an `ans` needs
//   an earlier `req` of its id.
// - `within-timeout`: an answer comes at most `timeout_ms` plus
//   `check_options::timeout_slack_ms` after its request, not counting the
//   time the requester was stopped (`check_options::paused`).
// - `typed-error`: an `ans ... err` names its error: the reason is neither
//   empty, `none` nor `unknown`.
// - `checksum`: `ans <id> ok <got>` carries the request's `want`; no one-way
//   message arrives `bad`.
// - `no-duplicates`: across the run, each request (`serve` of one from_inc
//   and id) is served once and each one-way message (`got` of one
//   sender_inc, epoch and seq) arrives once.
// - `per-pair-order`: the one-way messages of one sender incarnation on one
//   epoch arrive in the order sent, each sent one at most once, without a
//   gap: a message may be missing only at the tail, and only if the epoch
//   ended (the sender logged `down <receiver>` after the epoch began, or
//   either end was killed). A repeated arrival is left to `no-duplicates`.
//   A killed sender's last `send` line may be cut short, so arrivals past
//   its last logged seq count as sent.
// - `monitors`: per linked epoch, at most one `mon ... down` and one
//   `mon ... exit`; exactly one each in a history with `end` that logged
//   `down <peer>` after the `link`; no `mon` for an epoch never linked.
// - `store-drains`: a history with `end` reports its store holding 0 objects.
// - `rss`: the resident memory at the end is at most `rss_factor` times the
//   one after warm-up.
// - `history`: the files themselves: parse problems (reported by
//   parse_history), an incarnation id in two files, a sender without a
//   history, an epoch logged by other than its two ends.
//
// The functions keep no state; each may be called from any thread on
// histories no thread modifies. Results own their data.
#pragma once

#include "history.hpp"
#include "violation.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ferry::chaos {

/// The tolerances of `check`.
struct check_options {
  /// How much later than its timeout an answer may come, in milliseconds.
  int64_t timeout_slack_ms = 2000;
  /// How many times its warm-up size the resident memory may be at the end.
  double rss_factor = 1.2;
  /// Times (CLOCK_MONOTONIC microseconds, from and to) each incarnation was
  /// stopped (SIGSTOP): a stopped requester cannot notice its timeout, so
  /// the part of a wait it spent stopped does not count.
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> paused;
};

/// Returns every violation of the invariants (see the header comment) in
/// `histories`, empty if none: first those about the files, then those
/// within each history in turn, then those across histories.
std::vector<violation> check(const std::vector<history>& histories,
                             const check_options& options = {});

/// Returns `x` on several lines: `[invariant] what`, then each history line
/// indented.
std::string render(const violation& x);

/// What a chaos run did, counted from its histories.
struct summary {
  /// `req` lines.
  uint64_t requests = 0;
  /// `ans ... ok` lines.
  uint64_t answers_ok = 0;
  /// `ans ... err` lines.
  uint64_t answers_err = 0;
  /// `send` lines.
  uint64_t one_way_sent = 0;
  /// `got` lines.
  uint64_t one_way_got = 0;
  /// Requests of kind `object` or `local-object`.
  uint64_t objects = 0;
  /// Distinct epochs of `link` lines.
  uint64_t epochs = 0;
  /// Histories read.
  uint64_t incarnations = 0;
  /// Histories without `end`.
  uint64_t killed = 0;
  /// `down` lines: link ends a node was told of.
  uint64_t link_ends = 0;
  /// `mon` lines: down and exit messages of watched actors.
  uint64_t watch_messages = 0;
  /// The largest ratio of `rss end` to `rss warm` in one history (0: none
  /// has both).
  double rss_ratio = 0;
  /// `ans ... err` lines by error (the reason up to its second colon, e.g.
  /// "ferry_fw: link_down").
  std::map<std::string, uint64_t> errors;
};

/// Returns the counts of `histories`.
summary summarize(const std::vector<history>& histories);

/// Returns `x` on one line.
std::string render(const summary& x);

/// Returns the errors of `x` on one line ("name count, ..." or "none").
std::string render_errors(const summary& x);

} // namespace ferry::chaos
