// log_limiter: at most one log line per interval, counting the others.
//
// A stream of refusals (a peer sending what this node refuses, thousands a
// second) must not flood a node's log. A limiter lets one line through per
// interval; the next line that passes says how many were left out since.
// Counters (`link_stats`) still count every event.
//
// Thread-safety: `pass` may be called from any thread; the clock must
// outlive the limiter.
#pragma once

#include "clock.hpp"
#include "thread_safety.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace ferry::detail {

class log_limiter {
public:
  /// A limiter of one line per `interval` on `time` (the steady clock by
  /// default; tests pass a manual clock).
  explicit log_limiter(clock::duration interval,
                       const clock& time = clock::steady())
    : interval_(interval),
      clock_(&time) {
    // nop
  }

  /// Returns `line` to write now (saying how many lines like it were left
  /// out since the last one, if any), or nothing when it is left out.
  std::optional<std::string> pass(const std::string& line);

private:
  clock::duration interval_;
  const clock* clock_;
  mutex mtx_;
  std::optional<clock::time_point> last_ FERRY_GUARDED_BY(mtx_);
  uint64_t left_out_ FERRY_GUARDED_BY(mtx_) = 0;
};

} // namespace ferry::detail
