// histogram: fixed buckets with relaxed atomics (see metrics/histogram.hpp).
#include "metrics/histogram.hpp"

namespace ferry::detail {

namespace {

// Upper bounds in nanoseconds: 1, 5, 10, 50, 100, 500 us, 1, 5, 10, 50,
// 100, 500 ms, 1, 10 s.
constexpr std::array<uint64_t, 14> nanosecond_bounds{
  1'000,       5'000,       10'000,        50'000,        100'000,
  500'000,     1'000'000,   5'000'000,     10'000'000,    50'000'000,
  100'000'000, 500'000'000, 1'000'000'000, 10'000'000'000};

constexpr std::array<uint64_t, 9> count_bounds{1,  2,  4,   8,  16,
                                               32, 64, 128, 256};

static_assert(nanosecond_bounds.size() < histogram::max_buckets);
static_assert(count_bounds.size() < histogram::max_buckets);

} // namespace

histogram::histogram(layout kind) noexcept
  : bounds_(kind == layout::nanoseconds
              ? std::span<const uint64_t>{nanosecond_bounds}
              : std::span<const uint64_t>{count_bounds}),
    scale_(kind == layout::nanoseconds ? 1e-9 : 1.0) {
  // nop
}

void histogram::observe(uint64_t value) noexcept {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i])
    ++i;
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

bool histogram::empty() const noexcept {
  for (size_t i = 0; i <= bounds_.size(); ++i)
    if (counts_[i].load(std::memory_order_relaxed) != 0)
      return false;
  return true;
}

histogram_stats histogram::snapshot() const {
  histogram_stats result;
  result.bounds.reserve(bounds_.size());
  for (auto bound : bounds_)
    result.bounds.push_back(static_cast<double>(bound) * scale_);
  result.counts.reserve(bounds_.size() + 1);
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    auto n = counts_[i].load(std::memory_order_relaxed);
    result.counts.push_back(n);
    result.count += n;
  }
  result.sum =
    static_cast<double>(sum_.load(std::memory_order_relaxed)) * scale_;
  return result;
}

} // namespace ferry::detail
