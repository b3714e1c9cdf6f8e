// A link's way out through a same-host lane
// (framework/src/lane/lane_transport.hpp): frames arrive whole and in order
// through a ring many times smaller than what is sent, whatever the thread;
// a thread that may not wait never stands behind one that waits for room;
// an orderly close writes what was kept, and a closed ring drops the rest.
#include "ferry/errc.hpp"
#include "ferry/test/eventually.hpp"

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include "lane/lane_transport.hpp"
#include "lane/ring.hpp"
#include "thread_role.hpp"
#include "wire/out_frame.hpp"

using namespace std::chrono_literals;
using ferry::detail::lane_transport;
using ferry::detail::transport;
using ferry::detail::lane::ring;
namespace wire = ferry::detail::wire;
namespace bip = boost::interprocess;

namespace {

constexpr uint64_t ring_bytes = 16 * 1024;

/// The connection beside the lane: records how it was closed.
class connection_double final : public transport {
public:
  void send(wire::out_frame&&) override {
    ++sent;
  }
  void close(bool drain) override {
    closed = true;
    drained = drain;
  }
  void fail(caf::error why) override {
    failure = std::move(why);
    closed = true;
  }
  bool is_tls() const noexcept override { return false; }
  bool is_lane() const noexcept override {
    return false;
  }
  std::atomic<int> sent{0};
  std::atomic<bool> closed{false};
  std::atomic<bool> drained{false};
  caf::error failure;
};

/// A frame carrying `tag` and `bulk` bytes derived from it (runs of 4 KiB
/// and more are viewed in place, as an encoder's buffers are).
wire::out_frame frame_of(uint64_t tag, size_t bulk) {
  wire::out_frame result{wire::frame_type::heartbeat};
  result.fields().le64(tag);
  if (bulk > 0) {
    auto bytes = std::make_shared<std::vector<std::byte>>(bulk);
    for (size_t i = 0; i < bulk; ++i)
      (*bytes)[i] = static_cast<std::byte>((tag + i) & 0xff);
    result.append(*bytes, bytes);
  }
  result.finish();
  return result;
}

/// Reads the tag of a frame record and checks its bulk bytes.
uint64_t tag_of(const std::vector<std::byte>& record) {
  EXPECT_GE(record.size(), wire::header_size + 8);
  if (record.size() < wire::header_size + 8)
    return ~uint64_t{0};
  uint64_t tag = 0;
  for (size_t i = 0; i < 8; ++i)
    tag |= static_cast<uint64_t>(record[wire::header_size + i]) << (8 * i);
  for (size_t i = wire::header_size + 8; i < record.size(); ++i) {
    auto k = i - wire::header_size - 8;
    if (record[i] != static_cast<std::byte>((tag + k) & 0xff)) {
      ADD_FAILURE() << "frame " << tag << ": byte " << k << " differs";
      break;
    }
  }
  return tag;
}

struct lane_pair {
  lane_pair() {
    auto made = ring::create(ring_bytes);
    EXPECT_TRUE(made) << ferry::render(made.error());
    in = std::make_shared<ring>(std::move(*made));
    auto opened = ring::open(in->name());
    EXPECT_TRUE(opened) << ferry::render(opened.error());
    out = std::make_shared<ring>(std::move(*opened));
    sut = std::make_shared<lane_transport>(out, beside);
  }

  ~lane_pair() {
    in->unlink();
  }

  /// Reads records until `count` arrived or the ring closed and is empty.
  std::vector<uint64_t> read_tags(size_t count) {
    std::vector<uint64_t> tags;
    std::vector<std::byte> record;
    while (tags.size() < count) {
      auto st = in->read(record, uint64_t{1} << 30, 100ms);
      if (st == ring::status::empty)
        continue;
      if (st != ring::status::done)
        break;
      tags.push_back(tag_of(record));
    }
    return tags;
  }

  /// Starts a sender that sends `count` frames of half the ring, tagged 0
  /// to `count - 1`, each followed by a wait for room (what did not fit is
  /// kept), counting in `sent` the frames it is done with.
  std::thread waiting_sender(uint64_t count, std::atomic<uint64_t>& sent) {
    return std::thread{[this, count, &sent] {
      for (uint64_t i = 0; i < count; ++i) {
        sut->send(frame_of(i, ring_bytes / 2));
        sut->await_room(0);
        ++sent;
      }
    }};
  }

  std::shared_ptr<ring> in;
  std::shared_ptr<ring> out;
  std::shared_ptr<connection_double> beside
    = std::make_shared<connection_double>();
  std::shared_ptr<lane_transport> sut;
};

/// Sends `frame` as a link does on a thread that may wait: room first,
/// then the frame, then whatever was kept.
void send_waiting(lane_transport& sut, wire::out_frame&& frame) {
  sut.await_room(frame.size());
  sut.send(std::move(frame));
  sut.await_room(0);
}

} // namespace

TEST(lane_transport, FramesArriveWholeAndInOrderThroughASmallRing) {
  // Arrange: frames from a few bytes to four times the ring, 100 of them.
  lane_pair lane;
  constexpr size_t count = 100;
  std::vector<size_t> sizes;
  for (size_t i = 0; i < count; ++i)
    sizes.push_back((i * 7919) % (4 * ring_bytes));
  // Act
  std::thread sender{[&] {
    for (size_t i = 0; i < count; ++i)
      send_waiting(*lane.sut, frame_of(i, sizes[i]));
  }};
  auto tags = lane.read_tags(count);
  sender.join();
  // Assert
  ASSERT_EQ(tags.size(), count);
  for (size_t i = 0; i < count; ++i)
    EXPECT_EQ(tags[i], i);
  EXPECT_FALSE(lane.sut->backlog_flag()->load());
}

TEST(lane_transport, AThreadThatMayNotWaitPassesOneWaitingForRoom) {
  // Arrange: a sender waits for room in a full ring nobody reads, with
  // what did not fit kept (sent without waiting for room first, as when
  // another sender took the room it waited for).
  lane_pair lane;
  std::atomic<uint64_t> sent{0};
  auto waiting = lane.waiting_sender(8, sent);
  ASSERT_TRUE(ferry::test::eventually(
    [&] { return lane.sut->backlog_flag()->load(); }));
  // Act: a reader of frames sends (an answer, a refusal) meanwhile.
  auto reader_sends = std::async(std::launch::async, [&] {
    ferry::detail::thread_role::reads_frames();
    lane.sut->send(frame_of(100, 64));
  });
  // Assert: it returns although the waiting sender still waits.
  ASSERT_EQ(reader_sends.wait_for(30s), std::future_status::ready)
    << "a thread that may not wait stands behind one waiting for room";
  EXPECT_LT(sent.load(), 8u);
  // Then everything arrives once the peer reads: the waiting sender's
  // frames in order, the reader's after the one it found waiting.
  auto tags = lane.read_tags(9);
  waiting.join();
  ASSERT_EQ(tags.size(), 9u);
  std::vector<uint64_t> own;
  for (auto tag : tags)
    if (tag != 100)
      own.push_back(tag);
  EXPECT_EQ(own, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(lane_transport, AStalledReaderHoldsNoSenderOrControlFrameBehindAWaiter) {
  // Arrange: the peer's reader stalls (nobody reads the ring) and one
  // sender waits for room it will not get until the reader goes on.
  lane_pair lane;
  std::atomic<uint64_t> first_sent{0};
  auto first = lane.waiting_sender(4, first_sent);
  ASSERT_TRUE(ferry::test::eventually(
    [&] { return lane.sut->backlog_flag()->load(); }));
  // Act: another sender sends (its frame is kept in order behind the
  // waiter's), and a thread that may not wait sends a control frame (a
  // credit return, a refusal) meanwhile.
  auto other_sender = std::async(std::launch::async, [&] {
    lane.sut->send(frame_of(200, 64));
  });
  auto control = std::async(std::launch::async, [&] {
    ferry::detail::thread_role::reads_frames();
    lane.sut->send(frame_of(100, 16));
  });
  // Assert: both return while the first sender still waits.
  ASSERT_EQ(other_sender.wait_for(30s), std::future_status::ready)
    << "a sender stands behind one waiting for a stalled reader's ring";
  ASSERT_EQ(control.wait_for(30s), std::future_status::ready)
    << "a control frame stands behind a sender waiting for a stalled reader";
  EXPECT_FALSE(first_sent.load() == 4u);
  // Then the reader goes on and everything arrives, each sender's frames
  // in the order it sent them.
  auto tags = lane.read_tags(6);
  first.join();
  ASSERT_EQ(tags.size(), 6u);
  std::vector<uint64_t> own;
  for (auto tag : tags)
    if (tag < 100)
      own.push_back(tag);
  EXPECT_EQ(own, (std::vector<uint64_t>{0, 1, 2, 3}));
  EXPECT_NE(std::find(tags.begin(), tags.end(), 100u), tags.end());
  EXPECT_NE(std::find(tags.begin(), tags.end(), 200u), tags.end());
}

TEST(lane_transport, OrderlyCloseWritesWhatWasKeptThenClosesTheRing) {
  // Arrange: frames kept for want of room (a thread that may not wait).
  lane_pair lane;
  std::thread reader_thread{[&] {
    ferry::detail::thread_role::reads_frames();
    for (uint64_t i = 0; i < 6; ++i)
      lane.sut->send(frame_of(i, ring_bytes / 3));
  }};
  reader_thread.join();
  ASSERT_TRUE(lane.sut->backlog_flag()->load());
  // Act: an orderly close while the peer reads.
  std::vector<uint64_t> tags;
  std::thread peer{[&] { tags = lane.read_tags(7); }};
  lane.sut->close(true);
  peer.join();
  // Assert: all six, then the ring reads as closed; the connection beside
  // ended in order too; what comes after is dropped.
  EXPECT_EQ(tags, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(lane.beside->closed.load());
  EXPECT_TRUE(lane.beside->drained.load());
  lane.sut->send(frame_of(7, 16));
  EXPECT_FALSE(lane.sut->backlog_flag()->load());
}

TEST(lane_transport, ASenderWaitingForRoomWakesWhenTheLaneCloses) {
  // Arrange: the ring is full and its reader is gone.
  lane_pair lane;
  std::atomic<uint64_t> sent{0};
  auto waiting = lane.waiting_sender(8, sent);
  ASSERT_TRUE(ferry::test::eventually(
    [&] { return lane.sut->backlog_flag()->load(); }));
  // Act
  lane.sut->close(false);
  waiting.join();
  // Assert: the sender returned; the connection beside closed at once.
  EXPECT_TRUE(sent.load() == 8u);
  EXPECT_TRUE(lane.beside->closed.load());
  EXPECT_FALSE(lane.beside->drained.load());
}

TEST(lane_transport, APeerThatBreaksTheReadCounterTakesTheLinkDown) {
  // Arrange: the reading peer sets its counter past what was written.
  lane_pair lane;
  {
    auto shm = bip::shared_memory_object{bip::open_only,
                                         lane.in->name().c_str(),
                                         bip::read_write};
    bip::mapped_region region{shm, bip::read_write};
    auto* read =
      static_cast<std::byte*>(region.get_address()) + ring::read_offset;
    uint64_t hostile = 1'000'000;
    std::memcpy(read, &hostile, sizeof(hostile));
  }
  // Act
  lane.sut->send(frame_of(1, 64));
  // Assert: the link hears why (the connection beside fails with it), and
  // what comes after is dropped.
  EXPECT_TRUE(lane.beside->closed.load());
  EXPECT_EQ(lane.beside->failure, ferry::errc::lane_failed)
    << ferry::render(lane.beside->failure);
  EXPECT_NE(ferry::render(lane.beside->failure).find(lane.in->name()),
            std::string::npos);
  lane.sut->send(frame_of(2, 64));
  EXPECT_FALSE(lane.sut->backlog_flag()->load());
}
