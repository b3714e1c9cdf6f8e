// The steady clock (see ferry/clock.hpp).
#include "ferry/clock.hpp"

namespace ferry {

namespace {

class steady_clock_source final : public clock {
public:
  time_point now() const noexcept override {
    return std::chrono::steady_clock::now();
  }

  duration real_wait(duration span) const noexcept override {
    return std::max(span, duration::zero());
  }

  bool moves() const noexcept override { return true; }
};

} // namespace

const clock& clock::steady() noexcept {
  static const steady_clock_source instance;
  return instance;
}

} // namespace ferry
