// The faults of a chaos run: see fault_schedule.hpp.
#include "fault_schedule.hpp"

#include <algorithm>
#include <cstdio>
#include <random>

namespace ferry::chaos {

std::string to_string(fault_kind x) {
  switch (x) {
    case fault_kind::kill:
      return "kill";
    case fault_kind::partition:
      return "partition";
    case fault_kind::loss:
      return "loss";
    case fault_kind::delay:
      return "delay";
    case fault_kind::bandwidth:
      return "bandwidth";
    case fault_kind::fill:
      return "fill";
    case fault_kind::stop:
      return "stop";
  }
  return "?";
}

std::string render(const fault& x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "t=%.1fs ", x.at_ms / 1000.0);
  std::string out = buf;
  out += to_string(x.kind) + " ";
  for (size_t k = 0; k < x.targets.size(); ++k)
    out += (k == 0 ? "n" : ",n") + std::to_string(x.targets[k] + 1);
  std::snprintf(buf, sizeof(buf), " for %.1fs", x.duration_ms / 1000.0);
  out += buf;
  if (x.kind == fault_kind::loss)
    out += " (" + std::to_string(x.param) + " %)";
  else if (x.kind == fault_kind::delay)
    out += " (" + std::to_string(x.param) + " ms +- 20 ms)";
  else if (x.kind == fault_kind::bandwidth)
    out += " (" + std::to_string(x.param) + " Mbit/s)";
  return out;
}

std::vector<fault> make_schedule(uint64_t seed, int64_t phase_ms,
                                 size_t hosts, size_t delay_host) {
  std::mt19937_64 gen{seed};
  auto between = [&gen](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>{lo, hi}(gen);
  };
  std::vector<fault_kind> first{fault_kind::kill,      fault_kind::partition,
                                fault_kind::loss,      fault_kind::delay,
                                fault_kind::bandwidth, fault_kind::fill,
                                fault_kind::stop};
  std::shuffle(first.begin(), first.end(), gen);
  std::vector<fault> out;
  int64_t t = between(1000, 3000);
  for (size_t n = 0;; ++n) {
    fault f;
    f.at_ms = t;
    f.kind = n < first.size()
               ? first[n]
               : static_cast<fault_kind>(between(0, fault_kinds - 1));
    auto host = static_cast<size_t>(between(0, hosts - 1));
    f.targets = {host};
    switch (f.kind) {
      case fault_kind::kill:
        f.duration_ms = between(1000, 3000);
        break;
      case fault_kind::partition:
        if (between(0, 1) == 1) {
          auto other = static_cast<size_t>(between(0, hosts - 2));
          f.targets.push_back(other >= host ? other + 1 : other);
          std::sort(f.targets.begin(), f.targets.end());
        }
        f.duration_ms = between(1000, 10000);
        break;
      case fault_kind::loss:
        f.param = static_cast<int>(between(1, 5));
        f.duration_ms = between(3000, 10000);
        break;
      case fault_kind::delay:
        f.targets = {delay_host};
        f.param = 50;
        f.duration_ms = between(3000, 10000);
        break;
      case fault_kind::bandwidth:
        f.param = 10;
        f.duration_ms = between(3000, 10000);
        break;
      case fault_kind::fill:
        f.duration_ms = between(3000, 10000);
        break;
      case fault_kind::stop:
        f.duration_ms = 5000;
        break;
    }
    if (t + f.duration_ms > phase_ms)
      break;
    out.push_back(f);
    t += f.duration_ms + between(1000, 3000);
  }
  return out;
}

} // namespace ferry::chaos
