// wire_message::load and import stores (wire.cpp): the bytes of an
// `inline_handle` frame (a store object from another host, small enough to
// travel with the message) go straight from CAF's buffer into a sealed
// object of the reading node's store; without such a store, or when it
// cannot take them, they are read into memory instead.
#include "detail/wire.hpp"

#include "ferry/errc.hpp"

#include "store_test_support.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_serializer.hpp>

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
  wire_import() : sys(init_config(cfg)) {
    // nop
  }

  ~wire_import() override {
    unregister_import_store(&sys);
  }

  static caf::actor_system_config& init_config(caf::actor_system_config& x) {
    register_wire_types(x);
    return x;
  }

  /// Attaches a store of `capacity` bytes that never spills.
  store::object_store make_store(uint64_t capacity) {
    auto sc = small_config("wire", capacity);
    sc.spill_limit = 0;
    cleanup.emplace(store_cleanup{sc});
    auto st = store::object_store::attach(sc);
    EXPECT_TRUE(st) << ferry::render(st.error());
    return st ? std::move(*st) : store::object_store{};
  }

  /// A store of `capacity` bytes registered as this system's import store.
  store::object_store import_store(uint64_t capacity = uint64_t{1} << 20) {
    auto st = make_store(capacity);
    if (st)
      register_import_store(&sys, st);
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

  /// A message of one element: an `inline_handle` frame of `object` (its
  /// bytes, `claimed` as its size) followed by a plain frame of `tail`.
  static std::vector<char> encode(std::span<const std::byte> object,
                                  uint64_t claimed,
                                  std::span<const std::byte> tail,
                                  caf::actor_system& sys) {
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
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    EXPECT_FALSE(sink(msg));
    return buf;
  }

  /// Reads `buf` as the BASP worker of `sys` would.
  wire_message decode(const std::vector<char>& buf) {
    wire_message msg;
    caf::binary_deserializer source{sys.dummy_execution_unit(), buf};
    auto err = source(msg);
    EXPECT_FALSE(err) << caf::to_string(err);
    return msg;
  }

  static bool same(std::span<const std::byte> x, std::span<const std::byte> y) {
    return x.size() == y.size()
           && (x.empty() || std::memcmp(x.data(), y.data(), x.size()) == 0);
  }

  caf::actor_system_config cfg;
  caf::actor_system sys;
  std::optional<store_cleanup> cleanup;
  std::vector<std::byte> object = pattern(100'000, 1);
  std::vector<std::byte> tail = pattern(300, 2);
};

TEST_F(wire_import, InlineHandleLandsInTheReadingSystemsStore) {
  // Arrange
  auto st = import_store();
  ASSERT_TRUE(st);
  auto buf = encode(object, object.size(), tail, sys);
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
  // Arrange: a store exists but is not registered for this system.
  auto st = import_store();
  ASSERT_TRUE(st);
  unregister_import_store(&sys);
  auto buf = encode(object, object.size(), tail, sys);
  // Act
  auto msg = decode(buf);
  // Assert: decoding will copy the bytes into the store (link.cpp).
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
  auto buf = encode(object, object.size(), tail, sys);
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
  auto buf = encode(object, object.size(), tail, sys);
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
  auto buf = encode(object, object.size() + 1, tail, sys);
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
  auto with_handle = encode(object, object.size(), tail, sys);
  wire_message plain_only;
  plain_only.elements.emplace_back();
  std::vector<char> without;
  caf::binary_serializer sink{sys, without};
  ASSERT_FALSE(sink(plain_only));
  auto msg = decode(with_handle);
  ASSERT_EQ(msg.imports.size(), 1u);
  // Act
  caf::binary_deserializer source{sys.dummy_execution_unit(), without};
  ASSERT_FALSE(source(msg));
  // Assert
  EXPECT_TRUE(msg.imports.empty());
  EXPECT_EQ(objects_in(st), 0);
}

} // namespace
} // namespace ferry::detail
