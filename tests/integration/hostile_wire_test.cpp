// ferry's wire codecs reading hostile bytes (white-box: framework/src/wire/).
// Message and batch bodies cut at every length, corrupted at random, or
// claiming huge counts and lengths; an error flag without an error, unknown
// flags, bytes after the head or after the message; every control frame cut
// at every length, with a byte too many, or claiming huge lists, strings
// and flags; an intro of another protocol. Every read ends with an error
// or a whole value (one that writes back to exactly the bytes read), never
// a crash, and refuses a claimed count or length before allocating for it.
#include "wire/codec.hpp"
#include "wire/control.hpp"
#include "wire/frame.hpp"
#include "wire/message.hpp"
#include "wire/out_frame.hpp"

#include "ferry/errc.hpp"
#include "ferry/test/mentions.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace ferry::detail;
using ferry::test::mentions;

namespace {

/// Returns the body of `frame` (its bytes after the frame header).
std::vector<std::byte> body_of(const wire::out_frame& frame) {
  auto bytes = frame.flatten();
  return {bytes.begin() + wire::header_size, bytes.end()};
}

/// Writes the `width` low bytes of `x` little-endian at `at` of `bytes`.
void put_le(std::vector<std::byte>& bytes, size_t at, uint64_t x,
            size_t width) {
  for (size_t i = 0; i < width; ++i)
    bytes.at(at + i) = static_cast<std::byte>(x >> (8 * i));
}

/// Reads `body` as one whole message frame's body.
caf::error read_whole_message(std::span<const std::byte> body,
                              wire_message& out) {
  wire::reader in{body, "message frame"};
  if (auto err = read_message(in, out, nullptr))
    return err;
  return in.finish();
}

/// Reads `body` as one whole batch frame's body.
caf::error read_whole_batch(std::span<const std::byte> body, wire_batch& out) {
  wire::reader in{body, "batch frame"};
  return read_batch(in, out, nullptr);
}

/// A message of two elements of two frames each, every field set.
wire_message sample_message() {
  wire_message msg;
  msg.target = 7;
  msg.sender = 9;
  msg.mid = 11;
  for (size_t e = 0; e < 2; ++e) {
    wire_element el;
    el.header = wire_bytes{std::vector<std::byte>(5 + e, std::byte{0x42})};
    for (size_t f = 0; f < 2; ++f) {
      wire_frame frame;
      frame.kind = static_cast<uint8_t>(f);
      frame.size = 100 * f + e;
      frame.object_id = 3;
      frame.ticket = 4;
      frame.data = wire_bytes{std::vector<std::byte>(10 * f + e, std::byte{7})};
      el.frames.push_back(std::move(frame));
    }
    msg.elements.push_back(std::move(el));
  }
  return msg;
}

// Where the fields of a message body sit (sample_message's head: le32 head
// length; le64 target, sender, mid; u8 flags; le32 element count; then the
// first element's le32 header length and le32 frame count, and its first
// frame's u8 kind, le64 size, object id, ticket and data length).
constexpr size_t head_length_at = 0;
constexpr size_t flags_at = 28;
constexpr size_t element_count_at = 29;
constexpr size_t header_length_at = 33;
constexpr size_t frame_count_at = 37;
constexpr size_t data_length_at = 66;

} // namespace

TEST(hostile_message_codec, RoundTripKeepsEveryFieldAndTheError) {
  // Arrange: every field set, an error, and a piece large enough for a
  // buffer of its own.
  auto msg = sample_message();
  msg.error = caf::make_error(ferry::errc::no_such_actor, "gone");
  auto big = std::vector<std::byte>(100 << 10, std::byte{9});
  msg.elements[1].frames[1].data = wire_bytes{big};
  auto body = body_of(message_frame(msg));
  // Act
  wire_message out;
  auto err = read_whole_message(body, out);
  // Assert
  ASSERT_FALSE(err) << ferry::render(err);
  EXPECT_EQ(out.target, 7u);
  EXPECT_EQ(out.sender, 9u);
  EXPECT_EQ(out.mid, 11u);
  EXPECT_EQ(out.error, msg.error);
  EXPECT_TRUE(mentions(out.error, "gone"));
  ASSERT_EQ(out.elements.size(), 2u);
  for (size_t e = 0; e < 2; ++e) {
    auto& in_el = msg.elements[e];
    auto& out_el = out.elements[e];
    EXPECT_TRUE(std::ranges::equal(out_el.header.bytes(), in_el.header.bytes()));
    ASSERT_EQ(out_el.frames.size(), 2u);
    for (size_t f = 0; f < 2; ++f) {
      EXPECT_EQ(out_el.frames[f].kind, in_el.frames[f].kind);
      EXPECT_EQ(out_el.frames[f].size, in_el.frames[f].size);
      EXPECT_EQ(out_el.frames[f].object_id, 3u);
      EXPECT_EQ(out_el.frames[f].ticket, 4u);
      EXPECT_TRUE(std::ranges::equal(out_el.frames[f].data.bytes(),
                                     in_el.frames[f].data.bytes()));
    }
  }
  // The large piece has a buffer of its own: a decoder can adopt it.
  EXPECT_TRUE(out.elements[1].frames[1].data.sole_owner());
}

TEST(hostile_message_codec, EveryCutOfAMessageFails) {
  // Arrange: a message with an error, so that the cuts reach into it too.
  auto msg = sample_message();
  msg.error = caf::make_error(ferry::errc::link_down, "cut");
  auto body = body_of(message_frame(msg));
  size_t errors = 0;
  // Act
  for (size_t n = 0; n < body.size(); ++n) {
    wire_message out;
    if (read_whole_message(std::span{body}.first(n), out))
      ++errors;
  }
  // Assert
  EXPECT_EQ(errors, body.size());
}

TEST(hostile_message_codec, CorruptedMessageReadsAsAnErrorOrAsExactlyItsBytes) {
  // Arrange
  auto msg = sample_message();
  msg.error = caf::make_error(ferry::errc::link_down, "x");
  auto body = body_of(message_frame(msg));
  std::mt19937_64 rng{99};
  size_t errors = 0;
  size_t misread = 0;
  // Act: three random bytes changed, 2000 times.
  for (int i = 0; i < 2000; ++i) {
    auto bad = body;
    for (int k = 0; k < 3; ++k)
      bad[rng() % bad.size()] = static_cast<std::byte>(rng() & 0xFF);
    wire_message out;
    if (read_whole_message(bad, out))
      ++errors;
    else if (body_of(message_frame(out)) != bad)
      ++misread;
  }
  // Assert: what was taken stands for exactly the bytes that came.
  EXPECT_GT(errors, 0u);
  EXPECT_EQ(misread, 0u);
}

TEST(hostile_message_codec, HugeClaimedCountsAndLengthsAreRefusedBeforeAllocating) {
  // Arrange: a message of some 100 bytes whose head claims, in turn, a head
  // of 4 GiB, 2^32 - 1 elements, a 4 GiB header, 2^32 - 1 frames and a
  // frame of 2^64 - 1 bytes.
  auto body = body_of(message_frame(sample_message()));
  struct claim {
    size_t at;
    size_t width;
    uint64_t value;
    std::string refused_for;
  };
  std::vector<claim> claims{
    {head_length_at, 4, UINT32_MAX, "a head of 4294967295 bytes"},
    {element_count_at, 4, UINT32_MAX,
     "4294967295 elements in a head that holds fewer"},
    {header_length_at, 4, UINT32_MAX,
     "element 0 claims a header of 4294967295 bytes, more than the frame "
     "holds"},
    {frame_count_at, 4, UINT32_MAX,
     "element 0 claims 4294967295 frames, more than its head holds"},
    {data_length_at, 8, UINT64_MAX,
     "frame 0 of element 0 claims 18446744073709551615 bytes, more than the "
     "frame holds"},
  };
  for (auto& x : claims) {
    auto bad = body;
    put_le(bad, x.at, x.value, x.width);
    // Act
    wire_message out;
    auto err = read_whole_message(bad, out);
    // Assert
    EXPECT_EQ(err, caf::make_error(ferry::errc::decode_failed, err.context()))
      << x.refused_for;
    EXPECT_TRUE(mentions(err, x.refused_for));
  }
}

TEST(hostile_message_codec, ErrorFlagWithoutAnErrorAndUnknownFlagsAreRefused) {
  // Arrange: a message without an error whose flags say one follows, once
  // with nothing after its pieces and once with an empty error; and one
  // with a flag no version defines.
  auto body = body_of(message_frame(sample_message()));
  auto flag_only = body;
  put_le(flag_only, flags_at, 1, 1);
  auto empty_error = flag_only;
  empty_error.resize(empty_error.size() + 13, std::byte{0});
  auto unknown_flag = body;
  put_le(unknown_flag, flags_at, 2, 1);
  // Act
  wire_message out1;
  wire_message out2;
  wire_message out3;
  auto err_flag_only = read_whole_message(flag_only, out1);
  auto err_empty = read_whole_message(empty_error, out2);
  auto err_unknown = read_whole_message(unknown_flag, out3);
  // Assert
  EXPECT_TRUE(mentions(err_flag_only, "it ends inside a field"));
  EXPECT_TRUE(mentions(err_empty, "an error flag without an error"));
  EXPECT_TRUE(mentions(err_unknown, "flags 2"));
}

TEST(hostile_message_codec, BytesAfterTheHeadOrAfterTheMessageAreRefused) {
  // Arrange: a head length four bytes longer than the head's fields, with
  // four bytes there; and a whole message with a byte after it.
  auto body = body_of(message_frame(sample_message()));
  auto long_head = body;
  uint64_t head_length = 0;
  for (size_t i = 0; i < 4; ++i)
    head_length |= std::to_integer<uint64_t>(body[i]) << (8 * i);
  put_le(long_head, head_length_at, head_length + 4, 4);
  long_head.insert(long_head.begin() + 4 + static_cast<ptrdiff_t>(head_length),
                   4, std::byte{0});
  auto trailing = body;
  trailing.push_back(std::byte{0});
  // Act
  wire_message out1;
  wire_message out2;
  auto err_head = read_whole_message(long_head, out1);
  auto err_trailing = read_whole_message(trailing, out2);
  // Assert
  EXPECT_TRUE(mentions(err_head, "4 bytes after the head"));
  EXPECT_TRUE(mentions(err_trailing, "1 bytes after its last field"));
}

TEST(hostile_batch_codec, MoreMessagesThanABatchHoldsAreRefused) {
  // Arrange: a well-formed batch one message above the limit (its bytes
  // would hold them all), and one at the limit.
  auto over = body_of(
    batch_frame(std::vector<wire_message>(max_batch_messages + 1)));
  auto at = body_of(batch_frame(std::vector<wire_message>(max_batch_messages)));
  // Act
  wire_batch out_over;
  wire_batch out_at;
  auto err_over = read_whole_batch(over, out_over);
  auto err_at = read_whole_batch(at, out_at);
  // Assert
  EXPECT_TRUE(
    mentions(err_over, "8193 messages, more than a batch holds (8192)"));
  EXPECT_TRUE(out_over.messages.empty());
  ASSERT_FALSE(err_at) << ferry::render(err_at);
  EXPECT_EQ(out_at.messages.size(), size_t{max_batch_messages});
}

TEST(hostile_batch_codec, RoundTripKeepsEveryMessageInOrder) {
  // Arrange
  std::vector<wire_message> batch;
  for (uint64_t i = 0; i < 3; ++i) {
    auto msg = sample_message();
    msg.target = 100 + i;
    batch.push_back(std::move(msg));
  }
  batch[1].error = caf::make_error(ferry::errc::link_down, "x");
  // Act
  wire_batch out;
  auto err = read_whole_batch(body_of(batch_frame(batch)), out);
  // Assert
  ASSERT_FALSE(err) << ferry::render(err);
  ASSERT_EQ(out.messages.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out.messages[i].target, 100 + i);
    ASSERT_EQ(out.messages[i].elements.size(), 2u);
    EXPECT_TRUE(std::ranges::equal(
      out.messages[i].elements[1].frames[1].data.bytes(),
      batch[i].elements[1].frames[1].data.bytes()));
  }
  EXPECT_EQ(out.messages[1].error, batch[1].error);
  EXPECT_FALSE(out.messages[2].error);
}

TEST(hostile_batch_codec, EveryCutAndHugeCountsFail) {
  // Arrange: a batch of two; its count (the first 4 bytes) set to 2^32 - 1
  // (above the limit), and to the limit in bytes that hold two messages.
  auto body = body_of(batch_frame({sample_message(), sample_message()}));
  auto huge = body;
  put_le(huge, 0, UINT32_MAX, 4);
  auto many = body;
  put_le(many, 0, max_batch_messages, 4);
  // Act
  size_t errors = 0;
  for (size_t n = 0; n < body.size(); ++n) {
    wire_batch out;
    if (read_whole_batch(std::span{body}.first(n), out))
      ++errors;
  }
  wire_batch out1;
  wire_batch out2;
  auto err_huge = read_whole_batch(huge, out1);
  auto err_many = read_whole_batch(many, out2);
  // Assert
  EXPECT_EQ(errors, body.size());
  EXPECT_TRUE(mentions(err_huge, "more than a batch holds"));
  EXPECT_TRUE(mentions(err_many, "8192 messages in"));
}

namespace {

/// Returns the body of control frame `x`.
template <class T>
std::vector<std::byte> encoded(const T& x) {
  return body_of(wire::make_frame(x));
}

std::vector<std::byte> encoded(const spawn_request& x) {
  return body_of(spawn_frame(x));
}

/// Reads `body` as a `T`.
template <class T>
caf::error read_as(std::span<const std::byte> body, T& out) {
  wire::reader in{body, wire::name_of(T::type)};
  return out.read(in);
}

/// Reads `x`'s body whole, cut at every length and with a byte too many;
/// adds what went wrong to `wrong`.
template <class T>
void read_every_cut(const T& x, std::vector<std::string>& wrong) {
  auto body = encoded(x);
  std::string name = wire::name_of(T::type);
  T whole;
  if (auto err = read_as(body, whole))
    wrong.push_back(name + " whole: " + ferry::render(err));
  else if (encoded(whole) != body)
    wrong.push_back(name + " reads as another value");
  for (size_t n = 0; n < body.size(); ++n) {
    T out;
    if (!read_as(std::span{body}.first(n), out))
      wrong.push_back(name + " cut to " + std::to_string(n) + " of "
                      + std::to_string(body.size()) + " bytes was taken");
  }
  body.push_back(std::byte{0});
  T longer;
  if (!read_as(body, longer))
    wrong.push_back(name + " with a byte too many was taken");
}

/// Reads `x`'s body with random bytes changed, `rounds` times; counts the
/// reads that were taken but do not write back to the bytes read.
template <class T>
size_t misread_corruptions(const T& x, int rounds, std::mt19937_64& rng) {
  auto body = encoded(x);
  size_t misread = 0;
  for (int i = 0; i < rounds; ++i) {
    auto bad = body;
    for (int k = 0; k < 3; ++k)
      bad[rng() % bad.size()] = static_cast<std::byte>(rng() & 0xFF);
    T out;
    if (read_as(bad, out))
      continue;
    // An intro of another protocol is read only as far as its name.
    if constexpr (std::is_same_v<T, intro>)
      if (out.protocol != wire_protocol_version)
        continue;
    if (encoded(out) != bad)
      ++misread;
  }
  return misread;
}

intro sample_intro() {
  intro x;
  x.node_id = 0x1234;
  x.node_name = "rogue";
  x.host_id = "elsewhere";
  x.store_name = "/ferry";
  x.has_store = true;
  x.store_token = 99;
  return x;
}

hello sample_hello() {
  hello x;
  x.serializers = {"msgpack", "cereal.binary"};
  x.deserializers = {"msgpack"};
  x.decodable = {"msgpack"};
  x.default_actor = 5;
  x.window_bytes = 1 << 20;
  x.window_messages = 64;
  x.type_names = {"test.record", "string"};
  x.type_shapes = {"{id:i64}", "str"};
  x.lane = "/ferry-lane";
  return x;
}

spawn_request sample_spawn() {
  spawn_request x;
  x.request = 3;
  x.type_name = "adder";
  x.args = sample_message();
  return x;
}

caf::error sample_error() {
  return caf::make_error(ferry::errc::transfer_failed, "no such bytes");
}

} // namespace

TEST(hostile_control_codec, EveryControlFrameCutAtEveryLengthFailsCleanly) {
  // Arrange
  std::vector<std::string> wrong;
  // Act
  read_every_cut(sample_intro(), wrong);
  read_every_cut(sample_hello(), wrong);
  read_every_cut(welcome{}, wrong);
  read_every_cut(refuse{sample_error()}, wrong);
  read_every_cut(credit{1, 2, 3}, wrong);
  read_every_cut(credit_probe{}, wrong);
  read_every_cut(down_notice{4, sample_error()}, wrong);
  read_every_cut(exit_request{5, 6, sample_error()}, wrong);
  read_every_cut(link_request{7, 8, true}, wrong);
  read_every_cut(refusal{9, sample_error()}, wrong);
  read_every_cut(transfer_done{10}, wrong);
  read_every_cut(lookup{11, "gate"}, wrong);
  read_every_cut(sample_spawn(), wrong);
  read_every_cut(chunk_request{12, 13, 14, 15}, wrong);
  read_every_cut(relay_request{16, 17, 18, 19}, wrong);
  read_every_cut(actor_id_answer{20, 21}, wrong);
  read_every_cut(failed_answer{22, sample_error()}, wrong);
  // Assert: each whole frame read back as itself; no cut and no byte too
  // many was taken.
  EXPECT_TRUE(wrong.empty()) << testing::PrintToString(wrong);
}

TEST(hostile_control_codec, CorruptedControlFramesReadAsAnErrorOrAsExactlyTheirBytes) {
  // Arrange: the frames with strings, lists, flags and a nested message.
  std::mt19937_64 rng{7};
  // Act
  auto misread = misread_corruptions(sample_intro(), 2000, rng)
                 + misread_corruptions(sample_hello(), 2000, rng)
                 + misread_corruptions(lookup{11, "gate"}, 2000, rng)
                 + misread_corruptions(sample_spawn(), 2000, rng);
  // Assert
  EXPECT_EQ(misread, 0u);
}

TEST(hostile_control_codec, IntroOfAnotherProtocolReadsItsVersionIdAndNameAndStops) {
  // Arrange: what a node of protocol 8 sends (its version, id and name,
  // then fields this version does not know), and the same cut inside its
  // name.
  std::vector<std::byte> old;
  wire::writer out{old};
  out.le32(8);
  out.le64(0xabcd);
  out.str("old");
  out.bytes(std::vector<std::byte>(9, std::byte{0xff}));
  auto cut = std::span{old}.first(4 + 8 + 4 + 1);
  // Act
  intro from_old;
  auto old_err = read_as(old, from_old);
  intro from_cut;
  auto cut_err = read_as(cut, from_cut);
  // Assert: the old intro reads as far as its name (the handshake then
  // refuses it naming both versions); a cut one does not read.
  EXPECT_FALSE(old_err) << ferry::render(old_err);
  EXPECT_EQ(from_old.protocol, 8u);
  EXPECT_EQ(from_old.node_id, 0xabcdu);
  EXPECT_EQ(from_old.node_name, "old");
  EXPECT_EQ(from_old.host_id, "");
  EXPECT_TRUE(cut_err);
}

TEST(hostile_control_codec, HugeListsStringsAndOddFlagsAreRefusedBeforeAllocating) {
  // Arrange: a hello whose first list claims 2^32 - 1 strings, a lookup
  // whose name claims 4 GiB, a failed answer whose error text claims 4 GiB,
  // and a link request whose flag reads 2.
  auto many_strings = encoded(sample_hello());
  put_le(many_strings, 0, UINT32_MAX, 4);
  auto long_name = encoded(lookup{1, "gate"});
  put_le(long_name, 8, UINT32_MAX, 4);
  auto long_text = encoded(failed_answer{1, sample_error()});
  put_le(long_text, 8 + 1 + 8, UINT32_MAX, 4);
  auto odd_flag = encoded(link_request{1, 2, true});
  put_le(odd_flag, 16, 2, 1);
  // Act
  hello x1;
  lookup x2;
  failed_answer x3;
  link_request x4;
  auto err_strings = read_as(many_strings, x1);
  auto err_name = read_as(long_name, x2);
  auto err_text = read_as(long_text, x3);
  auto err_flag = read_as(odd_flag, x4);
  // Assert
  EXPECT_TRUE(mentions(err_strings, "a list claims 4294967295 strings in"));
  EXPECT_TRUE(mentions(err_name, "a string claims 4294967295 bytes"));
  EXPECT_TRUE(mentions(err_text, "a string claims 4294967295 bytes"));
  EXPECT_TRUE(mentions(err_flag, "a flag reads 2 (0 or 1 allowed)"));
  for (auto* err : {&err_strings, &err_name, &err_text, &err_flag})
    EXPECT_EQ(*err, caf::make_error(ferry::errc::decode_failed,
                                    err->context()));
}
