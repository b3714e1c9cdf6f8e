// child_process, the helper multi-process tests start their peers with:
// lines in and out, exit statuses, and a child that exits before the test
// is done writing to it (its closed stdin must not end the test binary).

#include "ferry/test/child_process.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <ctime>
#include <string>

#include <pthread.h>

namespace ferry::test {
namespace {

/// Returns whether SIGPIPE is pending on the calling thread.
bool sigpipe_pending() {
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  return sigismember(&pending, SIGPIPE) == 1;
}

/// Returns whether the calling thread blocks SIGPIPE.
bool sigpipe_blocked() {
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  return sigismember(&mask, SIGPIPE) == 1;
}

/// Blocks or unblocks SIGPIPE on the calling thread.
void block_sigpipe(bool on) {
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(on ? SIG_BLOCK : SIG_UNBLOCK, &pipe_only, nullptr);
}

/// Takes a pending SIGPIPE off the calling thread (SIGPIPE blocked).
void take_sigpipe() {
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  timespec now{0, 0};
  sigtimedwait(&pipe_only, nullptr, &now);
}

/// Starts a child that exits at once without reading its stdin, and waits
/// for it: the pipe to its stdin then has no reader.
class exited_child : public ::testing::Test {
protected:
  void SetUp() override {
    auto status = sut.wait();
    ASSERT_TRUE(status.exited) << to_string(status);
    ASSERT_EQ(status.code, 3);
  }

  child_process sut{"/bin/sh", {"-c", "exit 3"}};
};

TEST(child_process, LinesWrittenComeBackFromTheChild) {
  // Arrange: cat echoes its stdin.
  child_process sut{"/bin/cat", {}};
  // Act
  sut.write_line("ferry");
  auto line = sut.read_line();
  sut.close_stdin();
  auto status = sut.wait();
  // Assert
  ASSERT_TRUE(line);
  EXPECT_EQ(*line, "ferry");
  EXPECT_TRUE(status.ok()) << to_string(status);
}

TEST_F(exited_child, WritingDoesNotEndTheTestBinary) {
  // Arrange: SIGPIPE's default action, which ends the process, whatever
  // the runner started this binary with.
  auto previous = std::signal(SIGPIPE, SIG_DFL);
  ASSERT_NE(previous, SIG_ERR);
  // Act: each write fails with EPIPE and raises SIGPIPE.
  for (int i = 0; i < 3; ++i)
    sut.write_line("nobody reads this");
  // Assert: still here, with SIGPIPE unblocked as before.
  EXPECT_FALSE(sigpipe_blocked());
  std::signal(SIGPIPE, previous);
}

TEST_F(exited_child, SigpipeOfTheWriteIsTakenAndTheMaskRestored) {
  // Arrange: the caller blocks SIGPIPE itself, so one left over would stay
  // pending instead of ending the process.
  block_sigpipe(true);
  // Act
  sut.write_line("nobody reads this");
  // Assert
  EXPECT_FALSE(sigpipe_pending());
  EXPECT_TRUE(sigpipe_blocked());
  block_sigpipe(false);
}

TEST_F(exited_child, SigpipePendingBeforeTheWriteStaysPending) {
  // Arrange: a SIGPIPE that is not the write's, pending on this thread.
  block_sigpipe(true);
  ASSERT_EQ(pthread_kill(pthread_self(), SIGPIPE), 0);
  ASSERT_TRUE(sigpipe_pending());
  // Act
  sut.write_line("nobody reads this");
  // Assert: the caller's signal is still there for it to take.
  EXPECT_TRUE(sigpipe_pending());
  take_sigpipe();
  EXPECT_FALSE(sigpipe_pending());
  block_sigpipe(false);
}

TEST(child_process, ExitStatusNamesTheSignalThatEndedTheChild) {
  // Arrange
  child_process sut{"/bin/sleep", {"30"}};
  // Act
  sut.kill(SIGTERM);
  auto status = sut.wait();
  // Assert
  EXPECT_FALSE(status.exited);
  EXPECT_EQ(status.code, SIGTERM);
  EXPECT_EQ(to_string(status), "killed by signal " + std::to_string(SIGTERM));
}

} // namespace
} // namespace ferry::test
