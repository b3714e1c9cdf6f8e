// The peer process: ferry-bench started again in peer mode.
//
// `child` starts `/proc/self/exe` with arguments, its stdin and stdout on
// pipes: the driver writes commands line by line and reads answers with a
// deadline; stderr is inherited (the peer's diagnostics show up in the
// driver's). Closing stdin tells the peer to shut down; the destructor waits
// for it and kills it if it lingers. The process itself is the tests' child
// process (tests/support, ferry/test/child_process.hpp). Not thread-safe.
#pragma once

#include "ferry/test/child_process.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace ferry::bench {

class child {
public:
  /// Starts this program again with `args`. Throws std::runtime_error when
  /// the process cannot be started.
  explicit child(const std::vector<std::string>& args);

  child(const child&) = delete;
  child& operator=(const child&) = delete;

  /// Closes stdin, waits up to 10 s for the exit, then kills.
  ~child();

  /// Returns the process id.
  pid_t pid() const { return process_.pid(); }

  /// Writes `line` and a newline to the child's stdin.
  void write_line(const std::string& line) { process_.write_line(line); }

  /// Returns the next line of output, or nothing on timeout or end of output.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout) {
    return process_.read_line(timeout);
  }

  /// Reads lines until one starts with `prefix`; returns the rest of it.
  std::optional<std::string> wait_for(const std::string& prefix,
                                      std::chrono::milliseconds timeout) {
    return process_.wait_for(prefix, timeout);
  }

  /// Sends `line` and returns the answer starting with `prefix` (the rest).
  std::optional<std::string> ask(const std::string& line,
                                 const std::string& prefix,
                                 std::chrono::milliseconds timeout
                                 = std::chrono::seconds{30});

private:
  test::child_process process_;
};

} // namespace ferry::bench
