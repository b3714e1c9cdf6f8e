// Latencies of the load program (load_runs.hpp): a histogram of log-spaced
// buckets, 2 % wide from 1 µs to about 100 s, that client processes print
// as text and the driver merges. Quantiles are read at a bucket's upper
// edge, so they err by at most 2 % and never low. Not thread-safe.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace ferry::bench {

class latency_histogram {
public:
  static constexpr double growth = 1.02;
  static constexpr size_t buckets = 940; // 1.02^940 µs is about 120 s

  latency_histogram() : counts_(buckets, 0) {
  }

  void add(double us) {
    auto i = us <= 1 ? size_t{0}
                     : static_cast<size_t>(std::ceil(std::log(us)
                                                     / std::log(growth)));
    ++counts_[std::min(i, buckets - 1)];
    ++total_;
    max_us_ = std::max(max_us_, us);
  }

  uint64_t total() const {
    return total_;
  }

  double max_us() const {
    return max_us_;
  }

  /// The latency `q` (0..1) of the samples lie at or below (µs); 0 when
  /// there are none.
  double quantile(double q) const {
    if (total_ == 0)
      return 0;
    auto rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(total_)));
    uint64_t seen = 0;
    for (size_t i = 0; i < buckets; ++i) {
      seen += counts_[i];
      if (seen >= std::max<uint64_t>(rank, 1))
        return std::min(std::pow(growth, static_cast<double>(i)), max_us_);
    }
    return max_us_;
  }

  void merge(const latency_histogram& other) {
    for (size_t i = 0; i < buckets; ++i)
      counts_[i] += other.counts_[i];
    total_ += other.total_;
    max_us_ = std::max(max_us_, other.max_us_);
  }

  /// "max_us i:count i:count ..." (non-empty buckets only).
  std::string encode() const {
    std::ostringstream out;
    out << max_us_;
    for (size_t i = 0; i < buckets; ++i)
      if (counts_[i] != 0)
        out << ' ' << i << ':' << counts_[i];
    return out.str();
  }

  /// Reads what `encode` wrote; false on text it did not write.
  bool decode(const std::string& text) {
    std::istringstream in{text};
    if (!(in >> max_us_))
      return false;
    std::string pair;
    while (in >> pair) {
      auto colon = pair.find(':');
      if (colon == std::string::npos)
        return false;
      auto i = std::stoull(pair.substr(0, colon));
      auto n = std::stoull(pair.substr(colon + 1));
      if (i >= buckets)
        return false;
      counts_[i] += n;
      total_ += n;
    }
    return true;
  }

private:
  std::vector<uint64_t> counts_;
  uint64_t total_ = 0;
  double max_us_ = 0;
};

} // namespace ferry::bench
