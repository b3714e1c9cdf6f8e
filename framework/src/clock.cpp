// The steady clock (see clock.hpp).
#include "clock.hpp"

namespace ferry::detail {

namespace {

class steady_clock_source final : public clock {
public:
  time_point now() const noexcept override {
    return std::chrono::steady_clock::now();
  }
};

} // namespace

const clock& clock::steady() noexcept {
  static const steady_clock_source instance;
  return instance;
}

} // namespace ferry::detail
