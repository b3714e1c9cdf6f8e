// ferry-bench's output: the table on stdout, the target checks, the JSON
// file and the gnuplot picture. No CAF here.
#pragma once

#include "entity_runs.hpp"
#include "load_runs.hpp"
#include "machine.hpp"
#include "matrix.hpp"
#include "python_runs.hpp"

#include <map>
#include <ostream>
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
  /// The load program's sets (`--load`, load_runs.hpp).
  std::vector<load_set> load;
  /// The entity program's rows (`--entities`, entity_runs.hpp).
  std::vector<entity_row> entities;
  double wall_seconds = 0;
};

/// Returns `x` with `digits` decimals.
std::string fixed(double x, int digits);

/// `x` as the text of a JSON string (without quotes), and as a JSON number
/// (`null` when not finite).
std::string json_escape(const std::string& x);
std::string json_number(double x);

/// Runs gnuplot on `script` (which reads `data`), then removes `dir`, where
/// both are; false (and why on stderr, `data` kept) when gnuplot fails.
bool run_gnuplot(const std::string& script, const std::string& data,
                 const std::string& dir);

/// The load sets as JSON array elements (load_output.cpp), and as a table
/// on stdout.
void write_load_json(std::ostream& out, const std::vector<load_set>& sets);
void print_load(const std::vector<load_set>& sets);

/// The entity rows as JSON array elements (entity_output.cpp), and as a
/// table on stdout.
void write_entity_json(std::ostream& out, const std::vector<entity_row>& rows);
void print_entities(const std::vector<entity_row>& rows);

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

/// Draws the load sets' p99 latency against the offered rate (log-log),
/// with the 10 ms bound, with gnuplot; false (and why on stderr) on failure.
bool write_load_plot(const report& r, const std::string& path);

} // namespace ferry::bench
