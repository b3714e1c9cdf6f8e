// phi_detector: see cluster/phi_detector.hpp.
//
// The sums of the intervals and of their squares are kept as the window
// moves, so a heartbeat and a phi cost O(1). The normal distribution's tail
// is the logistic approximation Akka uses (error below 0.05 % over the range
// that matters), written so that it never divides by zero nor takes the
// logarithm of zero: far in the tail the chance is taken from the
// approximation's exponent directly.
#include "cluster/phi_detector.hpp"

#include <algorithm>
#include <cmath>

namespace ferry::detail {

namespace {

double to_ms(phi_detector::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

} // namespace

phi_detector::phi_detector(settings cfg) : cfg_(cfg) {
  cfg_.max_samples = std::max<size_t>(cfg_.max_samples, 2);
}

void phi_detector::add(double interval_ms) {
  if (intervals_.size() == cfg_.max_samples) {
    auto old = intervals_.front();
    intervals_.pop_front();
    sum_ -= old;
    squares_ -= old * old;
  }
  intervals_.push_back(interval_ms);
  sum_ += interval_ms;
  squares_ += interval_ms * interval_ms;
}

void phi_detector::heartbeat(clock::time_point now) {
  if (!last_) {
    // Two samples one deviation (a quarter of the estimate) either side of
    // the estimate: mean = estimate, deviation = estimate / 4.
    auto mean = to_ms(cfg_.first_estimate);
    auto dev = mean / 4;
    add(mean - dev);
    add(mean + dev);
  } else if (now > *last_) {
    add(to_ms(now - *last_));
  }
  if (!last_ || now > *last_)
    last_ = now;
}

double phi_detector::mean_interval() const {
  if (intervals_.empty())
    return 0;
  return sum_ / static_cast<double>(intervals_.size()) / 1000.0;
}

double phi_detector::phi(clock::time_point now) const {
  if (!last_ || intervals_.empty())
    return 0;
  auto n = static_cast<double>(intervals_.size());
  auto mean = sum_ / n;
  auto variance = std::max(0.0, squares_ / n - mean * mean);
  auto dev = std::max(std::sqrt(variance), to_ms(cfg_.min_std_deviation));
  dev = std::max(dev, 1e-3);
  mean += to_ms(cfg_.acceptable_pause);
  auto since = now > *last_ ? to_ms(now - *last_) : 0.0;
  auto y = (since - mean) / dev;
  // Logistic approximation of the normal CDF: P(X > since) ~ e / (1 + e)
  // with e = exp(-y (1.5976 + 0.070566 y^2)).
  auto exponent = -y * (1.5976 + 0.070566 * y * y);
  if (since > mean) {
    // The tail: -log10(e / (1 + e)). For a very negative exponent e is
    // tiny and -log10(e) = -exponent / ln 10 (exp would underflow to 0).
    if (exponent < -30)
      return -exponent / std::log(10.0);
    auto e = std::exp(exponent);
    return -std::log10(e / (1.0 + e));
  }
  // Not yet late: -log10(1 - 1 / (1 + e)), small.
  if (exponent > 30)
    return 0;
  auto e = std::exp(exponent);
  return -std::log10(1.0 - 1.0 / (1.0 + e));
}

} // namespace ferry::detail
