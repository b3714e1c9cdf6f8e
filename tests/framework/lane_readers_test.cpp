// The threads that read same-host lanes (framework/src/lane/readers.hpp):
// records that are CAF messages are delivered in order; a record that is
// not, or has bytes after its message, is refused and the reading goes on;
// a ring the peer closes or breaks ends the thread once, with the reason;
// stop_all ends every thread.
#include "ferry/errc.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/make_message.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "lane/readers.hpp"

using namespace std::chrono_literals;
using ferry::detail::lane::readers;
using ferry::detail::lane::ring;

namespace {

/// What a reader thread handed over, for the test thread to wait on.
struct seen {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<int32_t> delivered;
  std::vector<caf::error> refused;
  std::vector<caf::error> ended;

  template <class Pred>
  bool wait_for(Pred pred) {
    std::unique_lock<std::mutex> guard{mtx};
    return cv.wait_for(guard, 10s, pred);
  }
};

class lane_readers : public testing::Test {
protected:
  lane_readers() : sys(cfg) {
    auto made = ring::create(4096);
    EXPECT_TRUE(made);
    in = std::make_shared<ring>(std::move(*made));
    auto opened = ring::open(in->name());
    EXPECT_TRUE(opened);
    out = std::make_unique<ring>(std::move(*opened));
  }

  void start() {
    readers::backlog none;
    none.pending = std::make_shared<std::atomic<bool>>(false);
    none.drain = [] {
    };
    sut.start(
      in, sys, 1024,
      [this](caf::message msg) {
        std::lock_guard<std::mutex> guard{got.mtx};
        got.delivered.push_back(msg.get_as<int32_t>(0));
        got.cv.notify_all();
      },
      [this](const caf::error& err) {
        std::lock_guard<std::mutex> guard{got.mtx};
        got.refused.push_back(err);
        got.cv.notify_all();
      },
      [this](const caf::error& err) {
        std::lock_guard<std::mutex> guard{got.mtx};
        got.ended.push_back(err);
        got.cv.notify_all();
      },
      std::move(none));
  }

  /// Writes `bytes` as one record.
  void put(const std::vector<char>& bytes) {
    std::span<const std::byte> piece{
      reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()};
    ASSERT_EQ(out->write({&piece, 1}), ring::status::done);
  }

  /// Writes the CAF message holding `x`.
  void put_message(int32_t x) {
    std::vector<char> bytes;
    caf::binary_serializer sink{sys, bytes};
    auto msg = caf::make_message(x);
    ASSERT_FALSE(sink(msg));
    put(bytes);
  }

  caf::actor_system_config cfg;
  caf::actor_system sys;
  std::shared_ptr<ring> in;
  std::unique_ptr<ring> out;
  seen got;
  readers sut; // last: its destructor joins the threads using the above
};

} // namespace

TEST_F(lane_readers, MessagesAreDeliveredInOrder) {
  // Arrange
  start();
  // Act
  for (int32_t i = 0; i < 100; ++i)
    put_message(i);
  // Assert
  ASSERT_TRUE(got.wait_for([&] { return got.delivered.size() == 100; }));
  for (int32_t i = 0; i < 100; ++i)
    EXPECT_EQ(got.delivered[static_cast<size_t>(i)], i);
  EXPECT_TRUE(got.refused.empty());
}

TEST_F(lane_readers, RecordThatIsNoMessageIsRefusedAndReadingGoesOn) {
  // Arrange
  start();
  std::vector<char> garbage{'\x05', 'n', 'o', 'p', 'e', '!', '\x7f'};
  std::vector<char> trailing;
  {
    caf::binary_serializer sink{sys, trailing};
    auto msg = caf::make_message(int32_t{7});
    ASSERT_FALSE(sink(msg));
  }
  trailing.push_back('x');
  // Act
  put(garbage);
  put(trailing);
  put_message(42);
  // Assert
  ASSERT_TRUE(got.wait_for([&] { return got.delivered.size() == 1; }));
  EXPECT_EQ(got.delivered.front(), 42);
  ASSERT_EQ(got.refused.size(), 2u);
  for (auto& err : got.refused) {
    EXPECT_EQ(err, ferry::errc::decode_failed);
    EXPECT_NE(ferry::render(err).find(in->name()), std::string::npos);
  }
  EXPECT_NE(ferry::render(got.refused[1]).find("1 bytes after"),
            std::string::npos)
    << ferry::render(got.refused[1]);
  EXPECT_TRUE(got.ended.empty());
}

TEST_F(lane_readers, PeerClosingTheRingEndsTheThreadOnceWithoutAnError) {
  // Arrange
  start();
  // Act
  out->close();
  // Assert
  ASSERT_TRUE(got.wait_for([&] { return !got.ended.empty(); }));
  sut.stop_all();
  ASSERT_EQ(got.ended.size(), 1u);
  EXPECT_FALSE(got.ended.front());
}

TEST_F(lane_readers, RecordOverTheLimitEndsTheThreadWithLaneFailed) {
  // Arrange
  start();
  // Act
  put(std::vector<char>(2000, 'a'));
  // Assert
  ASSERT_TRUE(got.wait_for([&] { return !got.ended.empty(); }));
  sut.stop_all();
  ASSERT_EQ(got.ended.size(), 1u);
  EXPECT_EQ(got.ended.front(), ferry::errc::lane_failed);
  EXPECT_TRUE(got.delivered.empty());
}

TEST_F(lane_readers, StopAllEndsAWaitingThread) {
  // Arrange
  start();
  put_message(1);
  ASSERT_TRUE(got.wait_for([&] { return got.delivered.size() == 1; }));
  auto started = std::chrono::steady_clock::now();
  // Act
  sut.stop_all();
  // Assert
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_TRUE(in->closed());
  std::lock_guard<std::mutex> guard{got.mtx};
  EXPECT_EQ(got.ended.size(), 1u);
}
