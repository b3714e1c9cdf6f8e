// What the two kinds of chaos process (chaos_node.cpp, chaos_entities.cpp)
// share at their start: the --chaos-* flags every one takes (its index
// among the hosts, the hosts' addresses, its port, where its history and its
// stderr go), the stderr redirection, and handing the rest of the command
// line to ferry's and CAF's parser.
//
// Thread-safety: called from main before other threads start.
#pragma once

#include "ferry/node_config.hpp"

#include <caf/error.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ferry::chaos {

/// The flags every chaos process takes.
struct process_flags {
  /// --chaos-index: this process's host, an index into `hosts`.
  size_t index = 0;
  /// --chaos-hosts: every host's address, comma-separated.
  std::vector<std::string> hosts;
  /// --chaos-port: the port this process listens at.
  uint16_t port = 0;
  /// --chaos-history: the directory of the history files.
  std::string history_dir = ".";
  /// --chaos-stderr: where stderr goes (appended); empty: where it is.
  std::string stderr_file;
};

/// Takes the --chaos-* flags out of `args`: the common ones into `common`,
/// each other one to `own` as its name without `--chaos-` and its value
/// (empty without `=`); `own` returns false for a flag it does not know.
/// Returns what is wrong with them, or an empty string.
std::string take_flags(
  std::vector<std::string>& args, process_flags& common,
  const std::function<bool(const std::string&, const std::string&)>& own);

/// Sends this process's stderr to `file` (appending) unless it is empty.
void redirect_stderr(const std::string& file);

/// Parses `args` (ferry's and CAF's flags) into `cfg`, `program` as argv[0].
caf::error parse_config(ferry::node_config& cfg, const char* program,
                        std::vector<std::string>& args);

} // namespace ferry::chaos
