// Waiting for a link's senders to run out of credit, for flow-control tests
// that must see a sender wait whatever the speed of either side.
#pragma once

#include "ferry/link_stats.hpp"
#include "ferry/node.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

namespace ferry::test {

/// Polls `from`'s link to `peer` until senders waited for credit on it at
/// least `n` times, for at most 10 s; returns the stats seen last (empty
/// stats if the link was never there).
inline link_stats await_credit_waits(const node& from, const std::string& peer,
                                     uint64_t n) {
  link_stats last;
  for (int i = 0; i < 1000 && last.credit_waits < n; ++i) {
    if (auto now = from.stats(peer))
      last = *now;
    if (last.credit_waits < n)
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  return last;
}

} // namespace ferry::test
