// The invariants a chaos run checks within one history, and the accessors
// of events that the checks share; part of `check` (invariants.hpp), which
// also runs the checks across histories.
//
// Each check reads one history and appends its violations to `out`; it
// keeps no state and may run on any thread while no thread modifies the
// history. The accessors tolerate events not made by parse_history: a
// missing field reads as empty (as a number: 0).
#pragma once

#include "history.hpp"
#include "invariants.hpp"
#include "violation.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::chaos {

/// Returns field `i` of `e`, or an empty string if `e` has fewer.
const std::string& field(const event& e, size_t i);

/// Returns field `i` of `e` as a number, 0 unless it is one.
uint64_t number(const event& e, size_t i);

/// Returns whether `e` is a `kind` event with at least `fields` fields.
bool is(const event& e, std::string_view kind, size_t fields);

/// Returns `x` in decimal.
std::string str(uint64_t x);

/// Returns how a violation names `req` of `h`: "n2-31 request 17 (call to
/// n4 on epoch n2-31.2)".
std::string describe(const history& h, const event& req);

/// Checks `answered-once`, `within-timeout`, `typed-error` and the answers'
/// `checksum`.
void check_requests(const history& h, const check_options& options,
                    std::vector<violation>& out);

/// Checks `checksum` of the one-way messages `h` received.
void check_payloads(const history& h, std::vector<violation>& out);

/// Checks `monitors`.
void check_monitors(const history& h, std::vector<violation>& out);

/// Checks `store-drains`.
void check_store(const history& h, std::vector<violation>& out);

/// Checks `rss`.
void check_rss(const history& h, const check_options& options,
               std::vector<violation>& out);

} // namespace ferry::chaos
