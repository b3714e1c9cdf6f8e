// A tiny helper for the samples: start this program again (or another build
// of it) as a peer process, read the line it prints with its port, and let
// it exit by closing its stdin (or, in samples that leave a cluster first,
// SIGTERM); and a free port of 127.0.0.1 to give it.
// Samples that need several nodes use it.
#pragma once

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace sample {

/// Returns a port of 127.0.0.1 that was free a moment ago.
inline uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class peer_process {
public:
  /// Starts `/proc/self/exe` with `args`; waits for the "port <N>" line.
  explicit peer_process(std::vector<std::string> args)
    : peer_process("/proc/self/exe", std::move(args)) {
    // nop
  }

  /// Starts `program` with `args`; waits for the "port <N>" line.
  peer_process(std::string program, std::vector<std::string> args) {
    int to_child[2];
    int from_child[2];
    // Close-on-exec: a peer started later must not inherit this peer's
    // pipe ends (its stdin would then never see end of input).
    if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    posix_spawn_file_actions_addclose(&actions, to_child[1]);
    posix_spawn_file_actions_addclose(&actions, from_child[0]);
    std::vector<char*> argv{program.data()};
    for (auto& arg : args)
      argv.push_back(arg.data());
    argv.push_back(nullptr);
    auto rc = posix_spawn(&pid_, program.c_str(), &actions, nullptr,
                          argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(to_child[0]);
    close(from_child[1]);
    if (rc != 0)
      throw std::runtime_error("cannot start a peer process");
    stdin_ = to_child[1];
    stdout_ = fdopen(from_child[0], "r");
    unsigned port = 0;
    if (stdout_ == nullptr || fscanf(stdout_, "port %u", &port) != 1)
      throw std::runtime_error("the peer did not report its port");
    port_ = static_cast<uint16_t>(port);
  }

  peer_process(const peer_process&) = delete;
  peer_process& operator=(const peer_process&) = delete;

  /// Closes the peer's stdin (it exits) and waits for it.
  ~peer_process() {
    close(stdin_);
    int status = 0;
    waitpid(pid_, &status, 0);
    if (stdout_ != nullptr)
      fclose(stdout_);
  }

  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }

private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  FILE* stdout_ = nullptr;
  uint16_t port_ = 0;
};

/// Arguments for a peer named `node_name`: this process's own arguments
/// (`args`, without the program name) with its node name replaced, so every
/// option given to the sample (a store name, a config file) applies to its
/// peers too.
inline std::vector<std::string> peer_args(const std::vector<std::string>& args,
                                          const std::string& node_name) {
  std::vector<std::string> result;
  for (auto& arg : args)
    if (arg.rfind("--ferry.node-name=", 0) != 0)
      result.push_back(arg);
  result.push_back("--ferry.node-name=" + node_name);
  return result;
}

/// Set by SIGTERM and by the parent closing stdin (`serve_until_told`).
inline std::atomic<bool> told_to_end{false};

/// In a peer process: prints the port for the parent, then blocks until the
/// parent closes stdin or sends SIGTERM.
inline void serve_until_told(uint16_t port) {
  std::signal(SIGTERM, [](int) { told_to_end = true; });
  std::printf("port %u\n", static_cast<unsigned>(port));
  std::fflush(stdout);
  std::thread{[] {
    char buf[64];
    while (fgets(buf, sizeof(buf), stdin) != nullptr) {
      // Input is ignored; end of input ends the peer.
    }
    told_to_end = true;
  }}.detach();
  while (!told_to_end)
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
}

/// In a peer process: prints the port for the parent, then blocks until the
/// parent closes stdin.
inline void serve_until_parent_exits(uint16_t port) {
  std::printf("port %u\n", static_cast<unsigned>(port));
  std::fflush(stdout);
  char buf[64];
  while (fgets(buf, sizeof(buf), stdin) != nullptr) {
    // Input is ignored; end of input ends the peer.
  }
}

} // namespace sample
