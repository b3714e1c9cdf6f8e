// Waiting for a link's senders to run out of credit, for flow-control tests
// that must see a sender wait whatever the speed of either side.
#pragma once

#include "ferry/link_stats.hpp"
#include "ferry/node.hpp"
#include "ferry/test/eventually.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace ferry::test {

/// Polls `from`'s link to `peer` until senders waited for credit on it at
/// least `n` times, for at most 10 s; returns the stats seen last (empty
/// stats if the link was never there).
inline link_stats await_credit_waits(const node& from, const std::string& peer,
                                     uint64_t n) {
  link_stats last;
  eventually(
    [&] {
      if (auto now = from.stats(peer))
        last = *now;
      return last.credit_waits >= n;
    },
    std::chrono::seconds{10});
  return last;
}

} // namespace ferry::test
