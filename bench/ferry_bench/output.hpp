// ferry-bench's output: the table on stdout, the target checks, the JSON
// file and the gnuplot picture. No CAF here.
#pragma once

#include "machine.hpp"
#include "matrix.hpp"
#include "python_runs.hpp"

#include <map>
#include <string>
#include <vector>

namespace ferry::bench {

/// Everything one run produced.
struct report {
  std::string mode;
  machine_info machine;
  /// The command line that produced the run (`command_line`).
  std::string command;
  /// One warm memcpy per payload size (µs).
  std::map<uint64_t, double> memcpy_us;
  std::vector<result> results;
  std::vector<skipped_cell> skipped;
  /// The Python rows (python_runs.hpp); empty when not selected.
  std::vector<python_row> python;
  double wall_seconds = 0;
};

/// Returns `x` with `digits` decimals.
std::string fixed(double x, int digits);

/// Fills `baseline_msgs_per_s` and `ratio` of every row (see README.md).
void compute_ratios(std::vector<result>& results);

/// Prints the table, the skipped cells and the target checks.
void print_table(const report& r);

/// Writes the JSON file (README.md, "Reading the output"): the machine
/// block with the command, the rows, the skipped and failed cells, and every
/// target check as `check_targets` returns it; returns false (and says why on stderr) on failure.
bool write_json(const report& r, const std::string& path);

/// Draws throughput against payload size (log-log) with gnuplot; returns
/// false (and says why on stderr) on failure.
bool write_plot(const report& r, const std::string& path);

} // namespace ferry::bench
