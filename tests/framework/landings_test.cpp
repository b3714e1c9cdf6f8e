// Chunks of a pulled frame landing where they belong (transfer/landing_buffer,
// link/pending_asks, the chunk frames of transport/frame_reader). A landing
// buffer takes chunks in any order and refuses one beyond the frame,
// writing nothing; a chunk frame lands straight in its frame only when it
// answers an ask of this link registered for exactly that place and
// length, else it is kept aside (another length, an unknown request, an
// ask without a place) and writes nothing; a chunk longer than the
// receive buffer lands from the socket's reads without passing through it;
// a store handle's chunks land in the new store object; an ask after the
// link went down fails at once with the link's reason.
#include "transfer/landing_buffer.hpp"
#include "link/pending_asks.hpp"
#include "transport/frame_reader.hpp"
#include "wire/control.hpp"

#include "ferry/errc.hpp"
#include "ferry/test/mentions.hpp"

#include "ferry/store/object_store.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <unistd.h>

using namespace ferry::detail;
using ferry::test::mentions;

namespace {

/// A link's reading of chunk frames: its pending asks behind a frame sink.
class chunk_answers : public testing::Test, public net::frame_sink {
protected:
  uint64_t max_body(wire::frame_type) const override {
    return uint64_t{64} << 20;
  }

  caf::error on_frame(wire::frame_type, std::span<const std::byte>) override {
    return caf::make_error(ferry::errc::decode_failed, "not a chunk");
  }

  caf::error on_message(wire_message&&) override {
    return caf::make_error(ferry::errc::decode_failed, "not a chunk");
  }

  net::chunk_place chunk_landing(uint64_t request, uint64_t length) override {
    return asks.place(request, length);
  }

  caf::error on_chunk(uint64_t request, wire_bytes data, bool landed) override {
    pending_asks::answer a;
    a.data = std::move(data);
    a.landed = landed;
    if (!asks.complete(request, std::move(a), pending_asks::kind::chunk))
      ++unasked;
    return caf::none;
  }

  import_landing* imports() override { return nullptr; }

  /// Registers a chunk ask for `length` bytes at `offset` of `target`.
  uint64_t ask(std::shared_ptr<landing_buffer> target, uint64_t offset,
               uint64_t length) {
    return asks.add(
      [this](pending_asks::answer a) { answers.push_back(std::move(a)); },
      std::move(target), offset, length);
  }

  /// Reads the chunk frame answering `request` with `bytes`, handing it to
  /// the reader in reads of at most `step` bytes.
  caf::error read_chunk(uint64_t request, const std::vector<std::byte>& bytes,
                        size_t step = 1 << 20) {
    auto frame = chunk_frame(request, bytes, nullptr).flatten();
    net::frame_reader reader{false};
    size_t done = 0;
    while (done < frame.size()) {
      auto into = reader.buffer();
      auto n = std::min({into.size(), step, frame.size() - done});
      std::memcpy(into.data(), frame.data() + done, n);
      done += n;
      if (auto err = reader.consume(n, *this))
        return err;
    }
    return caf::none;
  }

  pending_asks asks;
  std::vector<pending_asks::answer> answers;
  size_t unasked = 0;
};

/// `n` bytes of a pattern that differs with `seed`.
std::vector<std::byte> pattern_bytes(size_t n, int seed) {
  std::vector<std::byte> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<std::byte>(i * 13 + static_cast<size_t>(seed));
  return out;
}

/// Chunk `k` of `frame` in chunks of `chunk` bytes (the last one short).
std::span<const std::byte> chunk_of(const std::vector<std::byte>& frame,
                                    size_t chunk, size_t k) {
  auto first = std::min(frame.size(), k * chunk);
  auto last = std::min(frame.size(), (k + 1) * chunk);
  return std::span{frame}.subspan(first, last - first);
}

} // namespace

TEST(landing_buffer, ChunksInAnyOrderMakeTheWholeFrame) {
  // Arrange: a frame of three chunks (the last one short), landed in order
  // and, in a second frame, in the order 2, 0, 1.
  const size_t chunk = 5000;
  auto frame = pattern_bytes(2 * chunk + 123, 3);
  auto piece = [&](size_t k) { return chunk_of(frame, chunk, k); };
  for (auto order : {std::vector<size_t>{0, 1, 2}, std::vector<size_t>{2, 0, 1}}) {
    landing_buffer buf{frame.size()};
    buf.prepare(frame.size());
    // Act
    for (auto k : order)
      ASSERT_TRUE(buf.land(k * chunk, piece(k))) << "chunk " << k;
    auto out = buf.take();
    // Assert
    EXPECT_EQ(out, frame) << "landed in order " << order[0] << order[1]
                          << order[2];
    EXPECT_TRUE(buf.take().empty()) << "taken once";
  }
}

TEST(landing_buffer, ChunkBeyondTheFrameIsRefusedAndWritesNothing) {
  // Arrange
  landing_buffer buf{100};
  auto first = pattern_bytes(60, 1);
  auto tail = pattern_bytes(41, 2);
  buf.prepare(60);
  ASSERT_TRUE(buf.land(0, first));
  // Act: a chunk beyond the prepared part; then, the whole frame prepared,
  // 60 + 41 bytes reach one past the end; so does any offset past it.
  auto unprepared = buf.land(60, std::span{tail}.first(40));
  buf.prepare(100);
  auto past_end = buf.land(60, tail);
  auto far_away = buf.land(uint64_t{1} << 62, std::span{tail}.first(1));
  auto fits = buf.land(60, std::span{tail}.first(40));
  // Assert
  EXPECT_FALSE(unprepared);
  EXPECT_FALSE(past_end);
  EXPECT_FALSE(far_away);
  EXPECT_TRUE(fits);
  auto out = buf.take();
  ASSERT_EQ(out.size(), 100u);
  EXPECT_TRUE(std::equal(first.begin(), first.end(), out.begin()));
  EXPECT_TRUE(std::equal(tail.begin(), tail.begin() + 40, out.begin() + 60));
}

TEST_F(chunk_answers, AnswerToAChunkAskGoesStraightIntoTheFrame) {
  // Arrange: a frame of two chunks; the second one is asked for.
  auto frame = std::make_shared<landing_buffer>(200);
  frame->prepare(200);
  auto first = pattern_bytes(100, 1);
  auto second = pattern_bytes(100, 2);
  ASSERT_TRUE(frame->land(0, first));
  auto id = ask(frame, 100, 100);
  // Act
  auto err = read_chunk(id, second);
  // Assert: landed, nothing kept aside, and the ask is used up.
  ASSERT_FALSE(err) << ferry::render(err);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_TRUE(answers[0].landed);
  EXPECT_EQ(answers[0].data.size(), 0u);
  auto whole = frame->take();
  EXPECT_TRUE(std::equal(first.begin(), first.end(), whole.begin()));
  EXPECT_TRUE(std::equal(second.begin(), second.end(), whole.begin() + 100));
  ASSERT_FALSE(read_chunk(id, second));
  EXPECT_EQ(answers.size(), 1u);
  EXPECT_EQ(unasked, 1u) << "a second answer answers nothing";
}

TEST_F(chunk_answers, AnswerThatMatchesNoAskIsKeptAsideAndWritesNothing) {
  // Arrange: an ask for 100 bytes; answers of another length, to an unknown
  // request, and to an ask without a place.
  auto frame = std::make_shared<landing_buffer>(100);
  frame->prepare(100);
  auto longer_id = ask(frame, 0, 100);
  auto placeless = asks.add(pending_asks::kind::chunk,
                            [this](pending_asks::answer a) {
                              answers.push_back(std::move(a));
                            });
  auto bytes = pattern_bytes(100, 5);
  // Act
  ASSERT_FALSE(read_chunk(longer_id, pattern_bytes(101, 6)));
  ASSERT_FALSE(read_chunk(longer_id ^ 0x5555, bytes));
  ASSERT_FALSE(read_chunk(placeless, bytes));
  // Assert
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_FALSE(answers[0].landed);
  EXPECT_EQ(answers[0].data.size(), 101u);
  EXPECT_FALSE(answers[1].landed);
  EXPECT_EQ(answers[1].data.size(), 100u);
  EXPECT_EQ(unasked, 1u);
  EXPECT_EQ(frame->take(), std::vector<std::byte>(100)) << "nothing landed";
}

TEST_F(chunk_answers, ChunkLongerThanTheReceiveBufferLandsFromTheReads) {
  // Arrange: an ask for 3 MiB, read in reads of 64 KiB.
  const size_t size = 3 << 20;
  auto frame = std::make_shared<landing_buffer>(size);
  frame->prepare(size);
  auto bytes = pattern_bytes(size, 8);
  auto id = ask(frame, 0, size);
  // Act
  auto err = read_chunk(id, bytes, 64 << 10);
  // Assert
  ASSERT_FALSE(err) << ferry::render(err);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_TRUE(answers[0].landed);
  EXPECT_EQ(frame->take(), bytes);
}

TEST_F(chunk_answers, ChunkFrameShorterThanItsRequestIdIsRefused) {
  // Arrange: a chunk frame of 5 bytes of body.
  std::vector<std::byte> record(wire::header_size + 5);
  wire::frame_header header;
  header.length = 5;
  header.type = wire::frame_type::chunk;
  wire::put_header(std::span<std::byte, wire::header_size>{record.data(),
                                                           wire::header_size},
                   header);
  // Act
  auto err = net::frame_reader::read_record(record, *this);
  // Assert
  EXPECT_TRUE(mentions(err, "shorter than its request id"))
    << ferry::render(err);
}

TEST_F(chunk_answers, ChunksOfAStoreHandleLandInTheNewStoreObject) {
  // Arrange: a store object of three chunks (the last one short), as the
  // puller creates for a store handle pulled from another host; the middle
  // chunk is asked for.
  ferry::store::store_config sc;
  sc.name = "ferry-test-" + std::to_string(::getpid()) + "-landing";
  sc.capacity = uint64_t{1} << 20;
  sc.spill_directory = "/tmp/" + sc.name + "-spill";
  sc.reaper_interval = std::chrono::milliseconds{0};
  struct cleanup {
    std::string name;
    ~cleanup() { static_cast<void>(ferry::store::object_store::remove(name)); }
  } removes{sc.name};
  auto store = ferry::store::object_store::attach(sc);
  ASSERT_TRUE(store) << ferry::render(store.error());
  const size_t chunk = 5000;
  auto frame = pattern_bytes(2 * chunk + 123, 9);
  auto piece = [&](size_t k) {
    auto bytes = chunk_of(frame, chunk, k);
    return std::vector<std::byte>{bytes.begin(), bytes.end()};
  };
  auto object = store->create(frame.size());
  ASSERT_TRUE(object) << ferry::render(object.error());
  auto id = object->id();
  auto target = std::make_shared<landing_buffer>(std::move(*object));
  auto request = ask(target, chunk, chunk);
  // Act: the middle chunk as the connection's reader reads its answer, the
  // others as the puller lands answers read aside; one more beyond the
  // object.
  auto err = read_chunk(request, piece(1));
  auto first = target->land(0, piece(0));
  auto last = target->land(2 * chunk, piece(2));
  auto beyond = target->land(2 * chunk + 1, piece(2));
  auto ref = target->seal();
  // Assert
  ASSERT_FALSE(err) << ferry::render(err);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_TRUE(answers[0].landed);
  EXPECT_TRUE(first);
  EXPECT_TRUE(last);
  EXPECT_FALSE(beyond);
  ASSERT_TRUE(ref) << ferry::render(ref.error());
  EXPECT_EQ(ref->id(), id);
  auto bytes = ref->bytes();
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), frame.begin(),
                         frame.end()));
  EXPECT_FALSE(target->land(0, piece(0))) << "nothing lands after the seal";
  EXPECT_FALSE(target->seal()) << "sealed once";
}

TEST(pending_asks, AnAskAfterTheLinkWentDownFailsAtOnceWithItsReason) {
  // Arrange: the link went down, failing what was asked.
  pending_asks sut;
  std::vector<pending_asks::answer> answers;
  auto record = [&](pending_asks::answer a) {
    answers.push_back(std::move(a));
  };
  ASSERT_NE(sut.add(pending_asks::kind::actor, record), 0u);
  sut.fail_all(caf::make_error(ferry::errc::link_down, "node beta shut down"));
  // Act: a lookup and a chunk ask come after.
  auto lookup = sut.add(pending_asks::kind::actor, record);
  auto chunk = sut.add(record, nullptr, 0, 16);
  // Assert: no id (nothing to send), and each heard why at once, as the
  // ask before them did.
  EXPECT_EQ(lookup, 0u);
  EXPECT_EQ(chunk, 0u);
  ASSERT_EQ(answers.size(), 3u);
  for (auto& a : answers) {
    EXPECT_EQ(a.error, ferry::errc::link_down);
    EXPECT_TRUE(mentions(a.error, "node beta shut down"));
  }
}
