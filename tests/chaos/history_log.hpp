// The history a chaos node writes: one line per event, `<t_us> <event>`.
//
// `t_us` is CLOCK_MONOTONIC in microseconds, which every process of the
// machine reads alike (network namespaces share it), so the driver can merge
// the files of all nodes. Each line goes to the file with one write(2) on a
// descriptor opened with O_APPEND, taken in time order under one lock: the
// file's order is the order of the events, and a process killed with
// SIGKILL leaves every line it wrote (the last one at most cut short).
// history.hpp says what each event means.
//
// Thread-safety: `write` may be called from any thread.
#pragma once

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace ferry::chaos {

class history_log {
public:
  /// Opens (creates) the file at `path`; `ok()` says whether that worked.
  explicit history_log(const std::string& path)
    : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                 0644)) {
  }

  history_log(const history_log&) = delete;
  history_log& operator=(const history_log&) = delete;

  ~history_log() {
    if (fd_ >= 0)
      ::close(fd_);
  }

  bool ok() const {
    return fd_ >= 0;
  }

  /// Appends "<now> <event>\n".
  void write(std::string_view event) {
    std::lock_guard<std::mutex> guard{mtx_};
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    auto us = static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
    std::string line = std::to_string(us);
    line.append(" ").append(event).append("\n");
    auto rc = ::write(fd_, line.data(), line.size());
    static_cast<void>(rc);
  }

private:
  std::mutex mtx_;
  int fd_;
};

} // namespace ferry::chaos
