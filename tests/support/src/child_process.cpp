#include "ferry/test/child_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ferry::test {

namespace {

/// Holds SIGPIPE on the calling thread while it writes to a child's stdin:
/// a write to a child that already exited then fails with EPIPE instead of
/// killing the test binary. After such a write, the SIGPIPE it raised is
/// taken before the thread's mask is restored (unless one was pending
/// already: that one is the caller's).
struct sigpipe_held {
  sigpipe_held() {
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
  }

  ~sigpipe_held() {
    if (wrote_to_closed_pipe && !was_pending) {
      sigset_t pipe_only;
      sigemptyset(&pipe_only);
      sigaddset(&pipe_only, SIGPIPE);
      timespec now{0, 0};
      while (sigtimedwait(&pipe_only, nullptr, &now) < 0 && errno == EINTR) {
        // retry
      }
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }

  sigpipe_held(const sigpipe_held&) = delete;
  sigpipe_held& operator=(const sigpipe_held&) = delete;

  sigset_t previous;
  bool was_pending = false;
  bool wrote_to_closed_pipe = false;
};

exit_status decode_status(int status) {
  if (WIFEXITED(status))
    return {true, WEXITSTATUS(status)};
  return {false, WIFSIGNALED(status) ? WTERMSIG(status) : -1};
}

} // namespace

std::string to_string(const exit_status& x) {
  return x.exited ? "exit code " + std::to_string(x.code)
                  : "killed by signal " + std::to_string(x.code);
}

child_process::child_process(const std::string& program,
                             std::vector<std::string> args) {
  int in_pipe[2];
  int out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe2 failed: " + std::string{strerror(errno)});
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    auto err = errno;
    close(in_pipe[0]);
    close(in_pipe[1]);
    throw std::runtime_error("pipe2 failed: " + std::string{strerror(err)});
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (auto& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  auto rc = posix_spawn(&pid_, program.c_str(), &actions, nullptr, argv.data(),
                        environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in_pipe[0]);
  close(out_pipe[1]);
  stdin_fd_ = in_pipe[1];
  stdout_fd_ = out_pipe[0];
  if (rc != 0) {
    pid_ = -1;
    close(stdin_fd_);
    close(stdout_fd_);
    throw std::runtime_error("cannot start " + program + ": " + strerror(rc));
  }
}

child_process::~child_process() {
  if (running()) {
    kill(SIGKILL);
    wait(std::chrono::seconds{10});
  }
  if (stdin_fd_ >= 0)
    close(stdin_fd_);
  if (stdout_fd_ >= 0)
    close(stdout_fd_);
}

std::optional<std::string>
child_process::read_line(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto pos = buffer_.find('\n'); pos != std::string::npos) {
      auto line = buffer_.substr(0, pos);
      buffer_.erase(0, pos + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || stdout_fd_ < 0)
      return std::nullopt;
    pollfd pfd{stdout_fd_, POLLIN, 0};
    auto n = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return std::nullopt;
    char chunk[4096];
    auto got = ::read(stdout_fd_, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      close(stdout_fd_);
      stdout_fd_ = -1;
      if (buffer_.empty())
        return std::nullopt;
      return std::exchange(buffer_, std::string{});
    }
    buffer_.append(chunk, static_cast<size_t>(got));
  }
}

std::optional<std::string>
child_process::wait_for(const std::string& prefix,
                        std::chrono::milliseconds timeout) {
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

void child_process::write_line(const std::string& line) {
  if (stdin_fd_ < 0)
    return;
  sigpipe_held held;
  auto text = line + '\n';
  const char* pos = text.data();
  auto left = text.size();
  while (left > 0) {
    auto n = ::write(stdin_fd_, pos, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      // EPIPE: the child is gone (its exit status says why).
      held.wrote_to_closed_pipe = n < 0 && errno == EPIPE;
      return;
    }
    pos += n;
    left -= static_cast<size_t>(n);
  }
}

void child_process::close_stdin() {
  if (stdin_fd_ >= 0) {
    close(stdin_fd_);
    stdin_fd_ = -1;
  }
}

void child_process::kill(int signal) {
  if (running())
    ::kill(pid_, signal);
}

bool child_process::stop() {
  if (!running())
    return false;
  ::kill(pid_, SIGSTOP);
  int status = 0;
  for (;;) {
    auto rc = waitpid(pid_, &status, WUNTRACED);
    if (rc == pid_ && WIFSTOPPED(status))
      return true;
    if (rc == pid_) {
      status_ = decode_status(status);
      return false;
    }
    if (rc < 0 && errno != EINTR)
      return false;
  }
}

exit_status child_process::wait(std::chrono::milliseconds timeout) {
  if (status_ || pid_ <= 0)
    return status_.value_or(exit_status{});
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    auto rc = waitpid(pid_, &status, WNOHANG);
    if (rc == pid_) {
      status_ = decode_status(status);
      return *status_;
    }
    if (rc < 0 && errno != EINTR) {
      status_ = exit_status{false, -1};
      return *status_;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      status_ = decode_status(status);
      return *status_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
}

std::optional<exit_status> child_process::poll() {
  if (status_ || pid_ <= 0)
    return status_;
  int status = 0;
  auto rc = waitpid(pid_, &status, WNOHANG);
  if (rc == pid_)
    status_ = decode_status(status);
  else if (rc < 0 && errno != EINTR)
    status_ = exit_status{false, -1};
  return status_;
}

} // namespace ferry::test
