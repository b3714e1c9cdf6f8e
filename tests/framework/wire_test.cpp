// Reading a message frame and the import landing (wire/message.cpp,
// node/landings.cpp): the bytes of an `inline_handle` frame (a store object
// from another host, small enough to travel with the message) go straight
// from the received bytes into a sealed object of the reading node's store;
// without an import landing, or when the store cannot take them, they are
// read into memory.
#include "node/landings.hpp"
#include "wire/message.hpp"

#include "ferry/errc.hpp"

#include "store_test_support.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

namespace ferry::detail {
namespace {

using store::test::pattern;
using store::test::small_config;
using store::test::store_cleanup;

class wire_import : public testing::Test {
protected:
  /// Attaches a store of `capacity` bytes that never spills.
  store::object_store make_store(uint64_t capacity) {
    auto sc = small_config("wire", capacity);
    sc.spill_limit = 0;
    cleanup.emplace(store_cleanup{sc});
    auto st = store::object_store::attach(sc);
    EXPECT_TRUE(st) << ferry::render(st.error());
    return st ? std::move(*st) : store::object_store{};
  }

  /// A store of `capacity` bytes where this system's reads land inline
  /// handles.
  store::object_store import_store(uint64_t capacity = uint64_t{1} << 20) {
    auto st = make_store(capacity);
    if (st) {
      places.import_into(st);
      landing = &places;
    }
    return st;
  }

  /// The number of objects in `st` (-1 when it cannot say).
  static int64_t objects_in(store::object_store& st) {
    auto summary = st.memory_summary();
    return summary ? static_cast<int64_t>(summary->objects.size()) : -1;
  }

  /// Checks that `msg` (as `encode` wrote it) was read into memory: no
  /// import, both frames' bytes in place.
  void expect_read_into_memory(const wire_message& msg) {
    EXPECT_TRUE(msg.imports.empty());
    auto& frames = msg.elements.at(0).frames;
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_TRUE(same(frames[0].data.bytes(), object));
    EXPECT_TRUE(same(frames[1].data.bytes(), tail));
  }

  /// A message frame of one element: an `inline_handle` frame of `object`
  /// (its bytes, `claimed` as its size) followed by a plain frame of `tail`.
  static std::vector<std::byte> encode(std::span<const std::byte> object,
                                       uint64_t claimed,
                                       std::span<const std::byte> tail) {
    wire_message msg;
    msg.target = 42;
    auto& element = msg.elements.emplace_back();
    auto& handle = element.frames.emplace_back();
    handle.kind = static_cast<uint8_t>(frame_kind::inline_handle);
    handle.size = claimed;
    handle.object_id = 7;
    handle.data = wire_bytes{object, nullptr};
    auto& plain = element.frames.emplace_back();
    plain.kind = static_cast<uint8_t>(frame_kind::inline_plain);
    plain.size = tail.size();
    plain.data = wire_bytes{tail, nullptr};
    return message_frame(msg).flatten();
  }

  /// Reads the frame in `buf` as a connection's reader would, landing
  /// inline handles through `landing`.
  wire_message decode(const std::vector<std::byte>& buf) {
    wire_message msg;
    wire::reader in{std::span{buf}.subspan(wire::header_size), "message"};
    auto err = read_message(in, msg, landing);
    EXPECT_FALSE(err) << ferry::render(err);
    EXPECT_FALSE(in.finish());
    return msg;
  }

  static bool same(std::span<const std::byte> x, std::span<const std::byte> y) {
    return x.size() == y.size()
           && (x.empty() || std::memcmp(x.data(), y.data(), x.size()) == 0);
  }

  landings places;
  import_landing* landing = nullptr;
  std::optional<store_cleanup> cleanup;
  std::vector<std::byte> object = pattern(100'000, 1);
  std::vector<std::byte> tail = pattern(300, 2);
};

TEST_F(wire_import, InlineHandleLandsInTheReadingSystemsStore) {
  // Arrange
  auto st = import_store();
  ASSERT_TRUE(st);
  auto buf = encode(object, object.size(), tail);
  // Act
  auto msg = decode(buf);
  // Assert: the object is a sealed copy in the store, the frame a view of
  // it (its size is what credit counts), and the frame after it read whole.
  ASSERT_EQ(msg.imports.size(), 1u);
  EXPECT_EQ(msg.imports[0].first, 7u);
  auto& ref = msg.imports[0].second;
  ASSERT_TRUE(ref);
  EXPECT_TRUE(same(ref.bytes(), object));
  auto& frames = msg.elements.at(0).frames;
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].data.bytes().data(), ref.bytes().data());
  EXPECT_EQ(frames[0].data.size(), object.size());
  EXPECT_TRUE(same(frames[1].data.bytes(), tail));
  EXPECT_EQ(objects_in(st), 1);
  // The copy goes when the message does.
  msg = wire_message{};
  EXPECT_EQ(objects_in(st), 0);
}

TEST_F(wire_import, InlineHandleIsReadIntoMemoryWithoutAnImportStore) {
  // Arrange: a store exists but the reader has no import landing.
  auto st = import_store();
  ASSERT_TRUE(st);
  landing = nullptr;
  auto buf = encode(object, object.size(), tail);
  // Act
  auto msg = decode(buf);
  // Assert: decoding will copy the bytes into the store
  // (link/decoder.cpp).
  expect_read_into_memory(msg);
  EXPECT_EQ(objects_in(st), 0);
}

TEST_F(wire_import, InlineHandleIsReadIntoMemoryWhenTheStoreIsFull) {
  // Arrange: the store's 1 MiB held by objects of 96 KiB, no spilling.
  auto st = import_store();
  ASSERT_TRUE(st);
  std::vector<store::object_ref> held;
  while (auto ref = st.put(pattern(96 << 10, 3)))
    held.push_back(std::move(*ref));
  ASSERT_FALSE(held.empty());
  auto buf = encode(object, object.size(), tail);
  // Act
  auto msg = decode(buf);
  // Assert: read as if there were no store (decoding then names the
  // store's error); nothing is skipped.
  expect_read_into_memory(msg);
}

TEST_F(wire_import, ObjectsLandedAheadOfDeliveryTakeAnEighthOfTheStore) {
  // Arrange: 1 MiB of store, so 128 KiB for objects landed ahead; each
  // message holds 100,000 bytes.
  auto st = import_store();
  ASSERT_TRUE(st);
  auto buf = encode(object, object.size(), tail);
  // Act: a second message read while the first is still held.
  auto first = decode(buf);
  auto second = decode(buf);
  // Assert: the second is read into memory (decoding copies it when it is
  // delivered) ...
  ASSERT_EQ(first.imports.size(), 1u);
  expect_read_into_memory(second);
  // ... and once the first is gone, the next one lands again.
  first = wire_message{};
  auto third = decode(buf);
  EXPECT_EQ(third.imports.size(), 1u);
  EXPECT_EQ(objects_in(st), 1);
}

TEST_F(wire_import, InlineHandleWhoseSizeDisagreesWithItsDataIsNotLanded) {
  // Arrange: the frame claims one byte more than it carries.
  auto st = import_store();
  ASSERT_TRUE(st);
  auto buf = encode(object, object.size() + 1, tail);
  // Act
  auto msg = decode(buf);
  // Assert: left for decoding to refuse ("handle frame size does not match
  // its data"); the store holds nothing.
  EXPECT_TRUE(msg.imports.empty());
  EXPECT_TRUE(same(msg.elements.at(0).frames[0].data.bytes(), object));
  EXPECT_EQ(objects_in(st), 0);
}

TEST_F(wire_import, ReadingAgainForgetsTheImportsOfTheLastRead) {
  // Arrange
  auto st = import_store();
  ASSERT_TRUE(st);
  auto with_handle = encode(object, object.size(), tail);
  wire_message plain_only;
  plain_only.elements.emplace_back();
  auto without = message_frame(plain_only).flatten();
  auto msg = decode(with_handle);
  ASSERT_EQ(msg.imports.size(), 1u);
  // Act
  msg = decode(without);
  // Assert
  EXPECT_TRUE(msg.imports.empty());
  EXPECT_EQ(objects_in(st), 0);
}

} // namespace
} // namespace ferry::detail
