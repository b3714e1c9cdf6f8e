// The targets ferry-bench checks after each run, from that run's figures
// (README.md, "Targets"): each a named threshold on one row's figure, met
// or missed. A row a target applies to that failed is listed as missed with
// its failure; nothing is left out because it missed.
#pragma once

#include "output.hpp"

#include <string>
#include <vector>

namespace ferry::bench {

/// One target checked against one row.
struct target_check {
  /// The target, e.g. "tcp >= 1 MiB".
  std::string what;
  /// The row's label.
  std::string row;
  /// The figure read and the threshold, or why there is none.
  std::string figure;
  bool met = false;
  /// Set when the target was not met and the machine, not ferry, is why
  /// (e.g. "cores": every core was busy); such a check prints as bound,
  /// not missed, so a MISSED line always means ferry.
  std::string bound;
};

/// Returns every target that applies to a row of `r`, in the order of the
/// rows (ratios must be computed first: `compute_ratios`).
std::vector<target_check> check_targets(const report& r);

} // namespace ferry::bench
