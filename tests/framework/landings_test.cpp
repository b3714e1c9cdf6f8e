// Chunks of a pulled frame landing where they belong (link/landing_buffer,
// node/landings, chunk_reply::load). A landing buffer takes chunks in any
// order and refuses one beyond the frame, writing nothing; a chunk reply
// lands straight in its frame only when the reading system's node has its
// landing registered for exactly its place and length, else it is kept
// aside (a reply naming another landing, an unknown key, or a frame given
// up meanwhile writes nothing), also when it claims more bytes than the
// message holds; a store handle's chunks land in the new store object.
#include "link/landing_buffer.hpp"
#include "node/landings.hpp"
#include "wire/control.hpp"
#include "wire/read_context.hpp"

#include "ferry/errc.hpp"
#include "ferry/node_config.hpp"
#include "ferry/test/mentions.hpp"

#include "ferry/store/object_store.hpp"

#include <caf/actor_system.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <unistd.h>

using namespace ferry::detail;
using ferry::test::mentions;

namespace {


/// A node's reading of chunk replies: an actor system whose config has the
/// landings bound, as a running node's has.
class chunk_reply_codec : public testing::Test {
protected:
  chunk_reply_codec() : sys(cfg), binding(cfg, &places) {
    // nop
  }

  /// Reads `buf` as the middleman of the node would.
  caf::error decode_wire(const std::vector<char>& buf, chunk_reply& out) {
    caf::binary_deserializer source{sys.dummy_execution_unit(), buf};
    return source(out);
  }

  ferry::node_config cfg;
  caf::actor_system sys;
  landings places;
  read_context_binding binding;
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

/// A chunk reply for `landing` carrying `bytes`, as its owner writes it.
std::vector<char> chunk_reply_bytes(uint64_t landing,
                                    const std::vector<std::byte>& bytes) {
  chunk_reply reply{landing, wire_bytes{bytes}};
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  EXPECT_FALSE(sink(reply));
  return buf;
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

TEST_F(chunk_reply_codec, ReplyForARegisteredLandingGoesStraightIntoTheFrame) {
  // Arrange: a frame of two chunks; the second one's landing is registered.
  auto frame = std::make_shared<landing_buffer>(200);
  frame->prepare(200);
  auto first = pattern_bytes(100, 1);
  auto second = pattern_bytes(100, 2);
  ASSERT_TRUE(frame->land(0, first));
  auto key = places.add(frame, 100, 100);
  auto buf = chunk_reply_bytes(key, second);
  // Act
  chunk_reply out;
  auto err = decode_wire(buf, out);
  // Assert: landed, nothing kept aside, and the landing is used up.
  ASSERT_FALSE(err) << caf::to_string(err);
  EXPECT_TRUE(out.landed);
  EXPECT_EQ(out.landing, key);
  EXPECT_EQ(out.data.size(), 0u);
  auto whole = frame->take();
  EXPECT_TRUE(std::equal(first.begin(), first.end(), whole.begin()));
  EXPECT_TRUE(std::equal(second.begin(), second.end(), whole.begin() + 100));
  chunk_reply again;
  ASSERT_FALSE(decode_wire(buf, again));
  EXPECT_FALSE(again.landed);
  EXPECT_EQ(again.data.size(), 100u);
}

TEST_F(chunk_reply_codec, ReplyThatMatchesNoLandingIsKeptAsideAndWritesNothing) {
  // Arrange: a landing for 100 bytes; replies with another length, an
  // unknown key, and for a frame given up meanwhile.
  auto frame = std::make_shared<landing_buffer>(100);
  frame->prepare(100);
  auto key = places.add(frame, 0, 100);
  auto gone = std::make_shared<landing_buffer>(100);
  gone->prepare(100);
  auto gone_key = places.add(gone, 0, 100);
  gone.reset();
  auto bytes = pattern_bytes(100, 5);
  auto longer = pattern_bytes(101, 6);
  struct sample {
    const char* what;
    std::vector<char> buf;
    size_t size;
  };
  std::vector<sample> samples{
    {"another length", chunk_reply_bytes(key, longer), 101},
    {"an unknown key", chunk_reply_bytes(key ^ 1, bytes), 100},
    {"no landing", chunk_reply_bytes(0, bytes), 100},
    {"a frame given up", chunk_reply_bytes(gone_key, bytes), 100},
  };
  for (auto& x : samples) {
    // Act
    chunk_reply out;
    auto err = decode_wire(x.buf, out);
    // Assert
    ASSERT_FALSE(err) << x.what << ": " << caf::to_string(err);
    EXPECT_FALSE(out.landed) << x.what;
    EXPECT_EQ(out.data.size(), x.size) << x.what;
  }
  EXPECT_EQ(frame->take(), std::vector<std::byte>(100)) << "nothing landed";
  places.remove(key);
}

TEST_F(chunk_reply_codec, LengthBeyondTheMessageIsRefusedEvenForALanding) {
  // Arrange: a reply claiming 100 bytes for a registered landing of 100,
  // cut to 60 bytes of data.
  auto frame = std::make_shared<landing_buffer>(100);
  frame->prepare(100);
  auto key = places.add(frame, 0, 100);
  auto buf = chunk_reply_bytes(key, pattern_bytes(100, 7));
  buf.resize(buf.size() - 40);
  // Act
  chunk_reply out;
  auto err = decode_wire(buf, out);
  // Assert
  EXPECT_TRUE(mentions(err, "claims 100 bytes but the message holds only 60"));
  EXPECT_FALSE(out.landed);
  EXPECT_EQ(frame->take(), std::vector<std::byte>(100));
  places.remove(key);
}

TEST_F(chunk_reply_codec, ChunksOfAStoreHandleLandInTheNewStoreObject) {
  // Arrange: a store object of three chunks (the last one short), as the
  // puller creates for a store handle pulled from another host; the middle
  // chunk's landing is registered.
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
  auto key = places.add(target, chunk, chunk);
  // Act: the middle chunk as the node's middleman reads its reply, the
  // others as the puller lands replies read aside; one more beyond the
  // object.
  chunk_reply reply;
  auto err = decode_wire(chunk_reply_bytes(key, piece(1)), reply);
  auto first = target->land(0, piece(0));
  auto last = target->land(2 * chunk, piece(2));
  auto beyond = target->land(2 * chunk + 1, piece(2));
  auto ref = target->seal();
  // Assert
  ASSERT_FALSE(err) << caf::to_string(err);
  EXPECT_TRUE(reply.landed);
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
