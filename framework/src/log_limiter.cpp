// log_limiter: one line per interval (see log_limiter.hpp).
#include "log_limiter.hpp"

#include <utility>

namespace ferry::detail {

std::optional<std::string> log_limiter::pass(const std::string& line) {
  auto now = clock_->now();
  uint64_t left_out = 0;
  {
    lock_guard guard{mtx_};
    if (last_ && now - *last_ < interval_) {
      ++left_out_;
      return std::nullopt;
    }
    last_ = now;
    left_out = std::exchange(left_out_, 0);
  }
  if (left_out == 0)
    return line;
  return line + " (and " + std::to_string(left_out) +
         " more like it since the last line)";
}

} // namespace ferry::detail
