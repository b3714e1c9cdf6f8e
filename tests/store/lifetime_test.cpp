// A store's lifetime with real processes (label integration): the last
// process to leave a store removes it, unless the store is persistent; a
// store whose last process was killed is reused and removed by the next; an
// attach that meets a segment retired by its last process starts over.
#include "ferry/store/errc.hpp"
#include "ferry/store/object_store.hpp"

#include "ferry/test/child_process.hpp"

#include "layout.hpp"
#include "store_test_support.hpp"

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <memory>
#include <string>
#include <vector>

using namespace ferry::store;
using namespace ferry::store::test;
using ferry::test::child_process;

namespace bip = boost::interprocess;

namespace {

bool segment_exists(const std::string& name) {
  return ::access(("/dev/shm/" + name).c_str(), F_OK) == 0;
}

std::unique_ptr<child_process> start_peer(const std::string& name) {
  auto peer = std::make_unique<child_process>(FERRY_STORE_PEER,
                                              std::vector<std::string>{name});
  EXPECT_TRUE(peer->wait_for("ready ")) << "peer did not start";
  return peer;
}

} // namespace

TEST(store_lifetime, LastProcessToLeaveRemovesTheStore) {
  // Arrange
  store_cleanup cleanup{small_config("last")};
  {
    auto sut = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(sut) << render(sut.error());
    auto ref = sut->put(pattern(1000, 1));
    ASSERT_TRUE(ref) << render(ref.error());
    ASSERT_TRUE(segment_exists(cleanup.cfg.name));
    // Act: the handle and then the store go.
  }
  // Assert
  EXPECT_FALSE(segment_exists(cleanup.cfg.name));
}

TEST(store_lifetime, PersistentStoreStaysUntilRemoved) {
  // Arrange
  store_cleanup cleanup{small_config("persistent")};
  cleanup.cfg.persistent = true;
  {
    auto sut = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(sut) << render(sut.error());
  }
  // Act
  auto stayed = segment_exists(cleanup.cfg.name);
  auto removed = object_store::remove(cleanup.cfg.name);
  // Assert
  EXPECT_TRUE(stayed);
  EXPECT_FALSE(removed);
  EXPECT_FALSE(segment_exists(cleanup.cfg.name));
}

TEST(store_lifetime, StoreStaysWhileAnotherProcessUsesIt) {
  // Arrange
  store_cleanup cleanup{small_config("shared")};
  auto sut = std::make_unique<object_store>();
  {
    auto attached = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(attached) << render(attached.error());
    *sut = std::move(*attached);
  }
  auto peer = start_peer(cleanup.cfg.name);
  // Act
  sut.reset();
  auto while_peer_lives = segment_exists(cleanup.cfg.name);
  peer->close_stdin();
  auto status = peer->wait();
  // Assert
  EXPECT_TRUE(while_peer_lives);
  EXPECT_TRUE(status.exited);
  EXPECT_FALSE(segment_exists(cleanup.cfg.name));
}

TEST(store_lifetime, StoreOfAKilledLastProcessIsReusedAndRemovedByTheNext) {
  // Arrange: the peer is the last process in the store when it is killed,
  // holding an object.
  store_cleanup cleanup{small_config("killed")};
  auto sut = std::make_unique<object_store>();
  {
    auto attached = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(attached) << render(attached.error());
    *sut = std::move(*attached);
  }
  auto peer = start_peer(cleanup.cfg.name);
  peer->write_line("put 5000 3");
  auto put = peer->read_line();
  ASSERT_TRUE(put && put->rfind("put ", 0) == 0) << (put ? *put : "");
  sut.reset();
  peer->kill(SIGKILL);
  static_cast<void>(peer->wait());
  ASSERT_TRUE(segment_exists(cleanup.cfg.name));
  // Act
  {
    auto again = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(again) << render(again.error());
    auto summary = again->memory_summary();
    ASSERT_TRUE(summary) << render(summary.error());
    EXPECT_EQ(summary->objects.size(), 0u) << "the dead peer's object";
  }
  // Assert
  EXPECT_FALSE(segment_exists(cleanup.cfg.name));
}

TEST(store_lifetime, AttachToARetiredSegmentStartsOverWithANewOne) {
  // Arrange: a segment whose last process marked it retired and died
  // before removing its name.
  store_cleanup cleanup{small_config("retired")};
  cleanup.cfg.persistent = true;
  {
    auto sut = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(sut) << render(sut.error());
  }
  {
    bip::shared_memory_object shm{bip::open_only, cleanup.cfg.name.c_str(),
                                  bip::read_write};
    bip::mapped_region region{shm, bip::read_write};
    static_cast<detail::segment_header*>(region.get_address())->retired = 1;
  }
  // Act: another process attaches (not persistent) and puts an object.
  auto pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int code = 1;
    {
      auto cfg = cleanup.cfg;
      cfg.persistent = false;
      auto store = object_store::attach(cfg);
      if (store && store->put(pattern(100, 2)))
        code = 0;
    }
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  // Assert: it made a new store, which went with it (the retired one was
  // persistent and would have stayed).
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(segment_exists(cleanup.cfg.name));
}
