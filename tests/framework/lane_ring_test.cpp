// The shared-memory ring of same-host lanes (framework/src/lane/ring.hpp):
// records in order across the wrap, records longer than the ring, waits
// that end when either side closes, and a peer's hostile bytes (a record
// over the limit, a counter past the capacity, an object that is no ring)
// refused without a crash or an allocation.
#include "ferry/errc.hpp"

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "lane/ring.hpp"

using namespace std::chrono_literals;
using ferry::detail::lane::ring;

namespace bip = boost::interprocess;

namespace {

constexpr uint64_t small_ring = 4096;

std::vector<std::byte> record_of(size_t n, int seed) {
  std::vector<std::byte> result(n);
  for (size_t i = 0; i < n; ++i)
    result[i] =
      static_cast<std::byte>((i * 31 + static_cast<size_t>(seed)) & 0xff);
  return result;
}

ring::status put(ring& sut, const std::vector<std::byte>& bytes) {
  std::span<const std::byte> piece{bytes};
  return sut.write({&piece, 1});
}

/// A reader's ring and a writer's view of it, as two nodes hold them.
struct ring_pair {
  ring reader;
  ring writer;
};

ring_pair make_pair(uint64_t capacity = small_ring) {
  auto reader = ring::create(capacity);
  EXPECT_TRUE(reader) << ferry::render(reader.error());
  auto writer = ring::open(reader->name());
  EXPECT_TRUE(writer) << ferry::render(writer.error());
  return {std::move(*reader), std::move(*writer)};
}

bool shm_exists(const std::string& name) {
  return std::filesystem::exists("/dev/shm/" + name);
}

} // namespace

TEST(lane_ring, RecordsComeOutInOrderAcrossTheWrap) {
  // Arrange: records of many sizes, more bytes in all than the ring holds
  // many times over, read as they are written.
  auto [reader, writer] = make_pair();
  std::vector<std::byte> out;
  // Act / Assert
  for (int i = 0; i < 500; ++i) {
    auto bytes = record_of(static_cast<size_t>((i * 37) % 1500), i);
    ASSERT_EQ(put(writer, bytes), ring::status::done) << "record " << i;
    ASSERT_EQ(reader.read(out, 1 << 20, 0ms), ring::status::done)
      << "record " << i;
    ASSERT_EQ(out, bytes) << "record " << i;
  }
}

TEST(lane_ring, EmptyRecordTravels) {
  // Arrange
  auto [reader, writer] = make_pair();
  std::vector<std::byte> out(3);
  // Act
  ASSERT_EQ(put(writer, {}), ring::status::done);
  // Assert
  ASSERT_EQ(reader.read(out, 16, 0ms), ring::status::done);
  EXPECT_TRUE(out.empty());
}

TEST(lane_ring, RecordLongerThanTheRingStreamsThroughIt) {
  // Arrange: 40 records of 64 KiB through a 4 KiB ring, written by one
  // thread while this one reads.
  auto [reader, writer] = make_pair();
  std::atomic<int> written{0};
  std::thread producer{[&, &w = writer] {
    for (int i = 0; i < 40; ++i)
      if (put(w, record_of(64 << 10, i)) == ring::status::done)
        ++written;
  }};
  // Act
  std::vector<std::byte> out;
  int matched = 0;
  for (int i = 0; i < 40; ++i)
    if (reader.read(out, 1 << 20, 5s) == ring::status::done &&
        out == record_of(64 << 10, i))
      ++matched;
  producer.join();
  // Assert
  EXPECT_EQ(written.load(), 40);
  EXPECT_EQ(matched, 40);
}

TEST(lane_ring, ReadOfAnEmptyRingReportsEmptyAfterItsWait) {
  // Arrange
  auto [reader, writer] = make_pair();
  std::vector<std::byte> out;
  // Act
  auto st = reader.read(out, 1 << 20, 20ms);
  // Assert
  EXPECT_EQ(st, ring::status::empty);
}

TEST(lane_ring, SpinningReaderTakesARecordWrittenWhileItPolls) {
  // Arrange: a reader that polls for up to 5 s, and a writer that writes
  // once the reader began to poll.
  auto [reader, writer] = make_pair();
  reader.set_spin(5s);
  auto bytes = record_of(100, 7);
  std::thread writing{[&, w = &writer] {
    while (reader.spins().polls == 0)
      std::this_thread::yield();
    EXPECT_EQ(put(*w, bytes), ring::status::done);
  }};
  std::vector<std::byte> out;
  // Act
  auto st = reader.read(out, 1 << 20, 10s);
  writing.join();
  // Assert
  ASSERT_EQ(st, ring::status::done);
  EXPECT_EQ(out, bytes);
  EXPECT_EQ(reader.spins().polls, 1u);
  EXPECT_EQ(reader.spins().hits, 1u);
}

TEST(lane_ring, ReaderWhosePollsFindNothingPollsOnceEverySixteenWaits) {
  // Arrange
  auto [reader, writer] = make_pair();
  reader.set_spin(100us);
  std::vector<std::byte> out;
  // Act: 2 misses stop the polling; then 32 more empty waits.
  for (int i = 0; i < 34; ++i)
    ASSERT_EQ(reader.read(out, 1 << 20, 0ms), ring::status::empty);
  auto after_misses = reader.spins();
  // A record present before the read needs no poll.
  ASSERT_EQ(put(writer, record_of(10, 1)), ring::status::done);
  ASSERT_EQ(reader.read(out, 1 << 20, 0ms), ring::status::done);
  // Assert: polls at waits 1 and 2, then at the 16th and 32nd after them.
  EXPECT_EQ(after_misses.polls, 4u);
  EXPECT_EQ(after_misses.hits, 0u);
  EXPECT_EQ(reader.spins().polls, 4u);
}

TEST(lane_ring, ReaderWithoutSpinNeverPolls) {
  // Arrange
  auto [reader, writer] = make_pair();
  std::vector<std::byte> out;
  // Act
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(reader.read(out, 1 << 20, 0ms), ring::status::empty);
  // Assert
  EXPECT_EQ(reader.spins().polls, 0u);
}

TEST(lane_ring, WriterWaitingForRoomWakesWhenTheReaderCloses) {
  // Arrange: a full ring and a writer waiting for room.
  auto [reader, writer] = make_pair();
  // 4 records of 1,008 bytes fill 4,032 of 4,096.
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(put(writer, record_of(1000, i)), ring::status::done);
  std::atomic<bool> returned{false};
  ring::status outcome = ring::status::done;
  std::thread blocked{[&, &w = writer] {
    outcome = put(w, record_of(1000, 9));
    returned = true;
  }};
  std::this_thread::sleep_for(50ms);
  ASSERT_FALSE(returned.load()) << "the fifth record did not wait for room";
  // Act
  reader.close();
  blocked.join();
  // Assert
  EXPECT_EQ(outcome, ring::status::closed);
  EXPECT_TRUE(writer.closed());
}

TEST(lane_ring, TryWriteReportsFullInsteadOfWaiting) {
  // Arrange: 4 records of 1,008 bytes fill 4,032 of 4,096.
  auto [reader, writer] = make_pair();
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(put(writer, record_of(1000, i)), ring::status::done);
  auto fifth = record_of(1000, 4);
  std::span<const std::byte> piece{fifth};
  auto longer = record_of(3000, 5);
  std::span<const std::byte> long_piece{longer};
  std::vector<std::byte> out;
  // Act
  auto when_full = writer.try_write({&piece, 1});
  auto over_half = writer.try_write({&long_piece, 1});
  ASSERT_EQ(reader.read(out, 1 << 20, 0ms), ring::status::done);
  auto with_room = writer.try_write({&piece, 1});
  // Assert
  EXPECT_EQ(when_full, ring::status::full);
  EXPECT_EQ(over_half, ring::status::full);
  EXPECT_EQ(with_room, ring::status::done);
  for (int i = 1; i < 5; ++i) {
    ASSERT_EQ(reader.read(out, 1 << 20, 0ms), ring::status::done);
    EXPECT_EQ(out, record_of(1000, i));
  }
}

TEST(lane_ring, ReaderWaitingForDataWakesWhenTheWriterCloses) {
  // Arrange
  auto [reader, writer] = make_pair();
  ring::status outcome = ring::status::done;
  std::thread waiting{[&, &r = reader] {
    std::vector<std::byte> out;
    outcome = r.read(out, 1 << 20, 10s);
  }};
  std::this_thread::sleep_for(20ms);
  // Act
  auto started = std::chrono::steady_clock::now();
  writer.close();
  waiting.join();
  // Assert: woken, not timed out.
  EXPECT_EQ(outcome, ring::status::closed);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
}

TEST(lane_ring, RecordOverTheReadersLimitIsRefusedAndClosesTheRing) {
  // Arrange
  auto [reader, writer] = make_pair();
  ASSERT_EQ(put(writer, record_of(200, 1)), ring::status::done);
  std::vector<std::byte> out;
  // Act
  auto st = reader.read(out, 100, 0ms);
  // Assert
  EXPECT_EQ(st, ring::status::corrupt);
  EXPECT_TRUE(reader.closed());
  EXPECT_TRUE(out.empty());
}

TEST(lane_ring, HostileLengthAllocatesOnlyWhatArrives) {
  // Arrange: a record claiming 1 GiB (under the limit) of which the writer
  // sends nothing; the writer's side then closes.
  auto [reader, writer] = make_pair();
  ASSERT_EQ(put(writer, record_of(16, 1)), ring::status::done);
  {
    auto shm = bip::shared_memory_object{bip::open_only, reader.name().c_str(),
                                         bip::read_write};
    bip::mapped_region region{shm, bip::read_write};
    auto* data =
      static_cast<std::byte*>(region.get_address()) + ring::header_size;
    uint64_t claimed = uint64_t{1} << 30;
    std::memcpy(data, &claimed, sizeof(claimed)); // little-endian hosts
  }
  std::vector<std::byte> out;
  std::thread closer{[&, &w = writer] {
    std::this_thread::sleep_for(30ms);
    w.close();
  }};
  // Act
  auto st = reader.read(out, uint64_t{2} << 30, 0ms);
  closer.join();
  // Assert: the 16 bytes there, no more.
  EXPECT_EQ(st, ring::status::closed);
  EXPECT_LE(out.capacity(), size_t{1} << 20);
}

TEST(lane_ring, CounterPastTheCapacityIsCorrupt) {
  // Arrange: the writer's counter set far beyond what the ring holds.
  auto [reader, writer] = make_pair();
  {
    auto shm = bip::shared_memory_object{bip::open_only, reader.name().c_str(),
                                         bip::read_write};
    bip::mapped_region region{shm, bip::read_write};
    auto* written =
      static_cast<std::byte*>(region.get_address()) + ring::written_offset;
    uint64_t hostile = 1'000'000;
    std::memcpy(written, &hostile, sizeof(hostile));
  }
  std::vector<std::byte> out;
  // Act
  auto st = reader.read(out, 1 << 20, 0ms);
  // Assert
  EXPECT_EQ(st, ring::status::corrupt);
  EXPECT_EQ(put(writer, record_of(8, 0)), ring::status::closed);
}

TEST(lane_ring, OpenRefusesWhatIsNoRing) {
  // Arrange: a shared-memory object with a lane's name but no ring in it,
  // and names that are no lane's.
  auto name = "ferry-lane-" + std::to_string(::getpid()) + "-999-0";
  {
    bip::shared_memory_object shm{bip::create_only, name.c_str(),
                                  bip::read_write};
    shm.truncate(8192);
  }
  // Act
  auto garbage = ring::open(name);
  auto foreign = ring::open("ferry-store-x");
  auto path = ring::open("ferry-lane-1/../../etc");
  bip::shared_memory_object::remove(name.c_str());
  // Assert
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error(), ferry::errc::lane_failed);
  EXPECT_NE(ferry::render(garbage.error()).find(name), std::string::npos);
  EXPECT_FALSE(foreign);
  EXPECT_FALSE(path);
}

TEST(lane_ring, CreateRefusesACapacityThatIsNoPowerOfTwo) {
  // Act
  auto odd = ring::create(5000);
  auto tiny = ring::create(1024);
  // Assert
  ASSERT_FALSE(odd);
  EXPECT_EQ(odd.error(), ferry::errc::lane_failed);
  EXPECT_FALSE(tiny);
}

TEST(lane_ring, NameGoesWhenTheCreatorLetsGoAndMappingsStay) {
  // Arrange
  auto [reader, writer] = make_pair();
  auto name = reader.name();
  ASSERT_TRUE(shm_exists(name));
  // Act
  writer.unlink();
  // Assert: the name is gone, the two mappings still carry records.
  EXPECT_FALSE(shm_exists(name));
  ASSERT_EQ(put(writer, record_of(10, 3)), ring::status::done);
  std::vector<std::byte> out;
  ASSERT_EQ(reader.read(out, 100, 0ms), ring::status::done);
  EXPECT_EQ(out, record_of(10, 3));
}

TEST(lane_ring, OrphansOfEndedProcessesAreRemovedAndLiveOnesKept) {
  // Arrange: a ring named after a process that has ended, and one of ours.
  auto child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0)
    ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  auto orphan = "ferry-lane-" + std::to_string(child) + "-0-1";
  {
    bip::shared_memory_object shm{bip::create_only, orphan.c_str(),
                                  bip::read_write};
    shm.truncate(4096);
  }
  auto live = ring::create(small_ring);
  ASSERT_TRUE(live);
  // Act
  auto removed = ring::remove_orphans();
  // Assert
  EXPECT_GE(removed, size_t{1});
  EXPECT_FALSE(shm_exists(orphan));
  EXPECT_TRUE(shm_exists(live->name()));
}
