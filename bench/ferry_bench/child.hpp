// The peer process: ferry-bench started again in peer mode.
//
// `child` starts `/proc/self/exe` with arguments, its stdin and stdout on
// pipes: the driver writes commands line by line and reads answers with a
// deadline; stderr is inherited (the peer's diagnostics show up in the
// driver's). Closing stdin tells the peer to shut down; the destructor waits
// for it and kills it if it lingers. Not thread-safe.
#pragma once

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
  pid_t pid() const { return pid_; }

  /// Writes `line` and a newline to the child's stdin.
  void write_line(const std::string& line);

  /// Returns the next line of output, or nothing on timeout or end of output.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);

  /// Reads lines until one starts with `prefix`; returns the rest of it.
  std::optional<std::string> wait_for(const std::string& prefix,
                                      std::chrono::milliseconds timeout);

  /// Sends `line` and returns the answer starting with `prefix` (the rest).
  std::optional<std::string> ask(const std::string& line,
                                 const std::string& prefix,
                                 std::chrono::milliseconds timeout
                                 = std::chrono::seconds{30});

private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::string buffer_;
};

} // namespace ferry::bench
