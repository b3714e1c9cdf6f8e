// A real child process for multi-process tests.
//
// `child_process` starts a program with arguments, with its stdout connected
// to a pipe the test reads line by line (with a deadline) and its stdin to a
// pipe the test can write to or close (peers exit when stdin closes, so a test
// that dies never leaves a peer behind). The destructor kills a child that is
// still running. Not thread-safe: one test thread owns one child_process.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace ferry::test {

/// How a child process ended.
struct exit_status {
  /// True if the process called exit (then `code` is its exit code).
  bool exited = false;
  /// Exit code, or the signal number when `exited` is false.
  int code = 0;
  /// Returns true if the process exited with code 0.
  bool ok() const { return exited && code == 0; }
};

/// Renders `x` as "exit code N" or "killed by signal N".
std::string to_string(const exit_status& x);

class child_process {
public:
  /// Starts `program` with `args`.
  /// REQUIRES: `program` is an executable path.
  child_process(const std::string& program, std::vector<std::string> args);

  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  ~child_process();

  /// Returns the process id.
  pid_t pid() const { return pid_; }

  /// Returns the next line of the child's stdout without its newline, or
  /// nothing if the child closed stdout or `timeout` passed first.
  std::optional<std::string>
  read_line(std::chrono::milliseconds timeout = std::chrono::seconds{30});

  /// Reads lines until one starts with `prefix`; returns the rest of that line
  /// or nothing on timeout or end of output.
  std::optional<std::string>
  wait_for(const std::string& prefix,
           std::chrono::milliseconds timeout = std::chrono::seconds{30});

  /// Writes `line` and a newline to the child's stdin. Writing to a child
  /// that has exited does nothing (SIGPIPE is held meanwhile: it would end
  /// the test binary); its exit status says what happened.
  void write_line(const std::string& line);

  /// Closes the child's stdin (peers take this as "shut down").
  void close_stdin();

  /// Sends `signal` to the child.
  void kill(int signal);

  /// Stops the child (SIGSTOP) and returns once it is stopped (a signal is
  /// delivered asynchronously: the child may run on for a moment after
  /// `kill`). Returns false if the child ended instead.
  bool stop();

  /// Waits up to `timeout` for the child to end; kills it (SIGKILL) after
  /// that. Returns how it ended.
  exit_status wait(std::chrono::milliseconds timeout = std::chrono::seconds{30});

  /// Returns how the child ended, or nothing while it runs (never waits,
  /// never kills).
  std::optional<exit_status> poll();

  /// Returns true if the child has not been reaped yet.
  bool running() const { return pid_ > 0 && !status_; }

private:
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  std::string buffer_;
  std::optional<exit_status> status_;
};

} // namespace ferry::test
