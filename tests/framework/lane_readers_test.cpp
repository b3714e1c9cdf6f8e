// The threads that read same-host lanes (framework/src/lane/readers.hpp):
// records are delivered in order, also those written before the ring
// closed; a record the deliverer refuses ends the thread with its reason
// and closes the ring; a ring the peer closes or breaks ends the thread
// once, with the reason; stop_all ends every thread.
#include "ferry/errc.hpp"

#include <cstring>

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
  std::vector<caf::error> ended;

  template <class Pred>
  bool wait_for(Pred pred) {
    std::unique_lock<std::mutex> guard{mtx};
    return cv.wait_for(guard, 10s, pred);
  }
};

class lane_readers : public testing::Test {
protected:
  lane_readers() {
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
      in, 1024,
      [this](std::span<const std::byte> record) -> caf::error {
        if (record.size() != sizeof(int32_t))
          return caf::make_error(ferry::errc::decode_failed,
                                 "a record of " + std::to_string(record.size())
                                   + " bytes");
        int32_t x = 0;
        std::memcpy(&x, record.data(), sizeof(x));
        std::lock_guard<std::mutex> guard{got.mtx};
        got.delivered.push_back(x);
        got.cv.notify_all();
        return caf::none;
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

  /// Writes a record holding `x`.
  void put_message(int32_t x) {
    std::vector<char> bytes(sizeof(x));
    std::memcpy(bytes.data(), &x, sizeof(x));
    put(bytes);
  }

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
  EXPECT_TRUE(got.ended.empty());
}

TEST_F(lane_readers, RecordTheDelivererRefusesEndsTheThreadAndClosesTheRing) {
  // Arrange
  start();
  // Act
  put_message(1);
  put(std::vector<char>{'n', 'o', 'p', 'e', '!'});
  // Assert
  ASSERT_TRUE(got.wait_for([&] { return !got.ended.empty(); }));
  sut.stop_all();
  ASSERT_EQ(got.ended.size(), 1u);
  EXPECT_EQ(got.ended.front(), ferry::errc::decode_failed);
  EXPECT_EQ(got.delivered, std::vector<int32_t>{1});
  EXPECT_TRUE(in->closed());
}

TEST_F(lane_readers, RecordsWrittenBeforeTheRingClosedAreStillRead) {
  // Arrange
  for (int32_t i = 0; i < 5; ++i)
    put_message(i);
  out->close();
  // Act
  start();
  // Assert
  ASSERT_TRUE(got.wait_for([&] { return !got.ended.empty(); }));
  sut.stop_all();
  EXPECT_EQ(got.delivered, (std::vector<int32_t>{0, 1, 2, 3, 4}));
  ASSERT_EQ(got.ended.size(), 1u);
  EXPECT_FALSE(got.ended.front());
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
