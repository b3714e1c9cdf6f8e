// A peer process on two pipes (see child.hpp).
#include "child.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ferry::bench {

child::child(const std::vector<std::string>& args) {
  int in_pipe[2];
  int out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string{"pipe2: "} + strerror(errno));
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    close(in_pipe[0]);
    close(in_pipe[1]);
    throw std::runtime_error(std::string{"pipe2: "} + strerror(errno));
  }
  // /proc/self/exe runs this very image even if the file was replaced since
  // (e.g. rebuilt while a long run goes on).
  std::string program = "/proc/self/exe";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  argv.push_back(program.data());
  for (auto& arg : copy)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  auto rc = posix_spawn(&pid_, program.c_str(), &actions, nullptr, argv.data(),
                        environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in_pipe[0]);
  close(out_pipe[1]);
  in_ = in_pipe[1];
  out_ = out_pipe[0];
  if (rc != 0) {
    pid_ = -1;
    close(in_);
    close(out_);
    throw std::runtime_error("cannot start " + program + ": " + strerror(rc));
  }
}

child::~child() {
  if (in_ >= 0)
    close(in_);
  if (pid_ > 0) {
    int status = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
    for (;;) {
      auto rc = waitpid(pid_, &status, WNOHANG);
      if (rc == pid_ || (rc < 0 && errno != EINTR))
        break;
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{2});
    }
  }
  if (out_ >= 0)
    close(out_);
}

void child::write_line(const std::string& line) {
  if (in_ < 0)
    return;
  auto text = line + '\n';
  const char* pos = text.data();
  auto left = text.size();
  while (left > 0) {
    auto n = ::write(in_, pos, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    pos += n;
    left -= static_cast<size_t>(n);
  }
}

std::optional<std::string>
child::read_line(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto pos = buffer_.find('\n'); pos != std::string::npos) {
      auto line = buffer_.substr(0, pos);
      buffer_.erase(0, pos + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || out_ < 0)
      return std::nullopt;
    pollfd pfd{out_, POLLIN, 0};
    auto n = poll(&pfd, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return std::nullopt;
    char chunk[4096];
    auto got = ::read(out_, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      close(out_);
      out_ = -1;
      return std::nullopt;
    }
    buffer_.append(chunk, static_cast<size_t>(got));
  }
}

std::optional<std::string>
child::wait_for(const std::string& prefix, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return std::nullopt;
    auto line = read_line(left);
    if (!line)
      return std::nullopt;
    if (line->rfind(prefix, 0) == 0)
      return line->substr(prefix.size());
  }
}

std::optional<std::string> child::ask(const std::string& line,
                                      const std::string& prefix,
                                      std::chrono::milliseconds timeout) {
  write_line(line);
  return wait_for(prefix, timeout);
}

} // namespace ferry::bench
