// ferry's wire codecs reading hostile bytes (white-box: framework/src/wire/): a
// hello of another protocol; wire messages and batches cut short, corrupted,
// or claiming huge counts; an error inside a message that CAF cannot read;
// wire_bytes claiming more than the message holds. Every read ends with an
// error or a whole value, never a crash, allocates nothing for what is
// merely claimed, and leaves the reader where the next value starts.
#include "hostile_peer.hpp"

#include "ferry/errc.hpp"

#include <caf/all.hpp>
#include <caf/binary_serializer.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

using namespace ferry::detail;
using ferry::test::decode_wire;
using ferry::test::encode_wire;
using ferry::test::mentions;

namespace {

/// A message of two elements of two frames each, every field set.
wire_message sample_wire_message() {
  wire_message msg;
  msg.target = 7;
  msg.sender = 9;
  msg.mid = 11;
  msg.token = 13;
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

} // namespace

TEST(hello_codec, HelloOfAnotherProtocolReadsAsFarAsItsVersion) {
  // Arrange: what a node of protocol 8 sends first (its version, then
  // fields this version lays out otherwise), and a hello of this version
  // cut after its node name.
  std::vector<char> old;
  {
    caf::binary_serializer sink{nullptr, old};
    uint32_t version = 8;
    std::string name = "old";
    ASSERT_FALSE(sink(version, name, name));
  }
  std::vector<char> cut;
  {
    caf::binary_serializer sink{nullptr, cut};
    uint32_t version = wire_protocol_version;
    std::string name = "new";
    ASSERT_FALSE(sink(version, name));
  }
  // Act
  hello from_old;
  auto old_err = decode_wire(old, from_old);
  hello from_cut;
  auto cut_err = decode_wire(cut, from_cut);
  // Assert: the old hello reads as far as its version (accept then
  // refuses it naming both versions); a cut one of this version does not.
  EXPECT_FALSE(old_err) << caf::to_string(old_err);
  EXPECT_EQ(from_old.protocol, 8u);
  EXPECT_TRUE(cut_err);
}

TEST(wire_message_codec, RoundTripKeepsEveryFieldAndTheError) {
  // Arrange
  auto msg = sample_wire_message();
  msg.error = caf::make_error(ferry::errc::no_such_actor, "gone");
  auto big = std::vector<std::byte>(100 << 10, std::byte{9});
  msg.elements[1].frames[1].data = wire_bytes{big};
  // Act
  auto buf = encode_wire(msg);
  wire_message out;
  auto err = decode_wire(buf, out);
  // Assert
  ASSERT_FALSE(err) << caf::to_string(err);
  EXPECT_EQ(out.target, 7u);
  EXPECT_EQ(out.sender, 9u);
  EXPECT_EQ(out.mid, 11u);
  EXPECT_EQ(out.token, 13u);
  EXPECT_EQ(out.error, msg.error);
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
  // The large frame has a buffer of its own: a decoder can adopt it.
  EXPECT_TRUE(out.elements[1].frames[1].data.sole_owner());
}

TEST(wire_message_codec, TruncatedAndCorruptedMessagesGetErrors) {
  // Arrange
  auto msg = sample_wire_message();
  auto buf = encode_wire(msg);
  std::mt19937_64 rng{99};
  size_t errors = 0;
  // Act: every truncation fails; random corruption never crashes.
  for (size_t n = 0; n < buf.size(); ++n) {
    std::vector<char> cut(buf.begin(), buf.begin() + static_cast<ptrdiff_t>(n));
    wire_message out;
    if (decode_wire(cut, out))
      ++errors;
  }
  for (int i = 0; i < 2000; ++i) {
    auto bad = buf;
    for (int k = 0; k < 3; ++k)
      bad[rng() % bad.size()] = static_cast<char>(rng() & 0xFF);
    wire_message out;
    static_cast<void>(decode_wire(bad, out));
  }
  // Assert
  EXPECT_EQ(errors, buf.size());
}

TEST(wire_message_codec, HugeClaimedCountsAreRefusedBeforeAllocating) {
  // Arrange: a head claiming 2^32 - 1 elements and one claiming a 4 GiB
  // header, in a message of a few dozen bytes.
  auto msg = sample_wire_message();
  auto buf = encode_wire(msg);
  // The head starts after CAF's 4-byte length; the element count sits at
  // offset 33 of the head, the first header length right after it.
  auto many_elements = buf;
  std::memset(many_elements.data() + 4 + 33, 0xFF, 4);
  auto huge_header = buf;
  std::memset(huge_header.data() + 4 + 37, 0xFF, 4);
  // Act
  wire_message out1;
  wire_message out2;
  auto err1 = decode_wire(many_elements, out1);
  auto err2 = decode_wire(huge_header, out2);
  // Assert
  ASSERT_TRUE(err1);
  ASSERT_TRUE(err2);
  EXPECT_NE(caf::to_string(err1).find("elements"), std::string::npos)
    << caf::to_string(err1);
  EXPECT_NE(caf::to_string(err2).find("header"), std::string::npos)
    << caf::to_string(err2);
}

TEST(wire_message_codec, ErrorThatMakesCafThrowArrivesAsAnErrorSayingSo) {
  // Arrange: found by fuzz_wire (tests/fuzz/corpus/wire/error_throws): a
  // message whose error's context holds an "@config_value" with an unknown
  // type index, on which CAF's deserializer throws "invalid type found".
  // Read by a gateway's middleman, the exception would end the node. The
  // head (a target of 1, sender 2, mid 3, token 4, the error flag, no
  // elements), then the error's bytes with their length, then a value
  // after it.
  const unsigned char head[] = {0, 0, 0, 37, 1, 0, 0, 0, 0, 0, 0, 0,
                                2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0,
                                0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0,
                                1, 0, 0, 0, 0};
  const unsigned char bad_error[] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 70, 64, 60, 62, 43, 64, 99, 111, 110,
    102, 105, 103, 95, 118, 97, 108, 117, 101, 43, 70, 0, 0, 0, 83, 235, 52,
    118, 101, 116, 1, 0, 0, 0, 0, 241, 255, 240, 81, 1, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 39, 16, 0, 0, 0, 0, 70, 70, 70, 70, 70, 70, 249, 1, 8, 0, 0,
    0, 7, 255, 255, 255, 255, 38, 1};
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  auto length = static_cast<uint32_t>(sizeof(bad_error));
  uint32_t trailer = 0xC0FFEE;
  ASSERT_FALSE(sink.apply_raw(sizeof(head), const_cast<unsigned char*>(head)));
  ASSERT_FALSE(sink(length));
  ASSERT_FALSE(sink.apply_raw(sizeof(bad_error),
                              const_cast<unsigned char*>(bad_error)));
  ASSERT_FALSE(sink(trailer));
  caf::actor_system_config cfg;
  register_wire_types(cfg);
  caf::actor_system sys{cfg};
  caf::binary_deserializer source{sys, buf};
  wire_message out;
  uint32_t after = 0;
  // Act
  caf::error err;
  EXPECT_NO_THROW(err = source(out, after));
  // Assert: the message is read, with an error saying what went wrong, and
  // the reader is where the next value starts.
  ASSERT_FALSE(err) << caf::to_string(err);
  EXPECT_EQ(out.target, 1u);
  EXPECT_EQ(out.mid, 3u);
  EXPECT_EQ(out.token, 4u);
  ASSERT_TRUE(out.error);
  EXPECT_EQ(out.error,
            caf::make_error(ferry::errc::decode_failed, out.error.context()));
  EXPECT_TRUE(mentions(out.error, "sent an error this node cannot read"));
  EXPECT_EQ(after, trailer);
}

namespace {

/// A type that only a writer registers: the reader's CAF does not know it.
struct sender_only {
  int32_t value = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sender_only& x) {
  return f(caf::meta::type_name("test.sender-only"), x.value);
}

} // namespace

TEST(wire_message_codec, ErrorOfATypeUnknownHereLeavesTheBatchWhole) {
  // Arrange: a batch of two messages, the first answering with an error
  // whose context holds a type the reader has not registered (the sender
  // has): the error that fails to read must not take the batch with it.
  caf::actor_system_config writer_cfg;
  register_wire_types(writer_cfg);
  writer_cfg.add_message_type<sender_only>("test.sender-only");
  caf::actor_system writer{writer_cfg};
  wire_batch batch;
  batch.messages.resize(2);
  batch.messages[0].target = 5;
  batch.messages[0].error
    = caf::make_error(ferry::errc::no_such_actor, sender_only{42});
  batch.messages[1].target = 6;
  batch.messages[1].elements.emplace_back().header
    = wire_bytes{std::vector<std::byte>{std::byte{1}}};
  std::vector<char> buf;
  caf::binary_serializer sink{writer, buf};
  ASSERT_FALSE(sink(batch));
  caf::actor_system_config reader_cfg;
  register_wire_types(reader_cfg);
  caf::actor_system reader{reader_cfg};
  caf::binary_deserializer source{reader, buf};
  wire_batch out;
  // Act
  auto err = source(out);
  // Assert: both messages, the first with an error naming the cause.
  ASSERT_FALSE(err) << caf::to_string(err);
  ASSERT_EQ(out.messages.size(), 2u);
  EXPECT_EQ(out.messages[0].target, 5u);
  EXPECT_TRUE(mentions(out.messages[0].error,
                       "sent an error this node cannot read"));
  EXPECT_EQ(out.messages[1].target, 6u);
  ASSERT_EQ(out.messages[1].elements.size(), 1u);
  EXPECT_FALSE(out.messages[1].error);
}

TEST(wire_bytes_codec, RoundTripAtEverySizeClassAndNextValueStillReads) {
  // Arrange: chunk payloads travel as wire_bytes; sizes below and above
  // the 2 MiB huge-page advice, each followed by a value the reader must
  // still find where it belongs.
  for (size_t n : {size_t{0}, size_t{1}, size_t{70} << 10, size_t{3} << 20}) {
    std::vector<std::byte> bytes(n);
    for (size_t i = 0; i < n; ++i)
      bytes[i] = static_cast<std::byte>(i * 31 + 7);
    wire_bytes in{bytes};
    uint32_t trailer = 0xC0FFEE;
    std::vector<char> buf;
    caf::binary_serializer sink{nullptr, buf};
    ASSERT_FALSE(sink(in, trailer));
    // Act
    caf::binary_deserializer source{nullptr, buf.data(), buf.size()};
    wire_bytes out;
    uint32_t after = 0;
    auto err = source(out, after);
    // Assert
    ASSERT_FALSE(err) << n << " bytes: " << caf::to_string(err);
    EXPECT_TRUE(std::ranges::equal(out.bytes(), bytes)) << n << " bytes";
    // A decoder can adopt the buffer (an empty one holds nothing to adopt).
    if (n > 0) {
      EXPECT_TRUE(out.sole_owner()) << n << " bytes";
    }
    EXPECT_EQ(after, trailer) << n << " bytes";
    EXPECT_EQ(source.remaining(), 0u) << n << " bytes";
  }
}

TEST(wire_bytes_codec, LengthBeyondTheMessageIsRefused) {
  // Arrange: a length of 17 (CAF's integer encoding) before 16 bytes.
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  uint64_t claimed = 17;
  ASSERT_FALSE(sink(claimed));
  buf.insert(buf.end(), 16, char{1});
  // Act
  wire_bytes out;
  auto err = decode_wire(buf, out);
  // Assert
  EXPECT_TRUE(mentions(err, "claims 17 bytes but the message holds only 16"));
  EXPECT_EQ(out.size(), 0u);
}

TEST(wire_batch_codec, MoreMessagesThanABatchHoldsAreRefused) {
  // Arrange: a well-formed batch one message above the limit (its bytes
  // would hold them all), and one at the limit.
  wire_batch over;
  over.messages.resize(max_batch_messages + 1);
  wire_batch at;
  at.messages.resize(max_batch_messages);
  auto over_buf = encode_wire(over);
  auto at_buf = encode_wire(at);
  // Act
  wire_batch out_over;
  wire_batch out_at;
  auto err_over = decode_wire(over_buf, out_over);
  auto err_at = decode_wire(at_buf, out_at);
  // Assert
  EXPECT_TRUE(
    mentions(err_over, "8193 messages, more than a batch holds (8192)"));
  EXPECT_TRUE(out_over.messages.empty());
  ASSERT_FALSE(err_at) << caf::to_string(err_at);
  EXPECT_EQ(out_at.messages.size(), size_t{max_batch_messages});
}

TEST(wire_batch_codec, RoundTripKeepsEveryMessageInOrder) {
  // Arrange
  wire_batch batch;
  for (uint64_t i = 0; i < 3; ++i) {
    auto msg = sample_wire_message();
    msg.target = 100 + i;
    batch.messages.push_back(std::move(msg));
  }
  batch.messages[1].error = caf::make_error(ferry::errc::link_down, "x");
  // Act
  auto buf = encode_wire(batch);
  wire_batch out;
  auto err = decode_wire(buf, out);
  // Assert
  ASSERT_FALSE(err) << caf::to_string(err);
  ASSERT_EQ(out.messages.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out.messages[i].target, 100 + i);
    ASSERT_EQ(out.messages[i].elements.size(), 2u);
    EXPECT_TRUE(std::ranges::equal(
      out.messages[i].elements[1].frames[1].data.bytes(),
      batch.messages[i].elements[1].frames[1].data.bytes()));
  }
  EXPECT_EQ(out.messages[1].error, batch.messages[1].error);
  EXPECT_FALSE(out.messages[2].error);
}

TEST(wire_batch_codec, TruncationsAndHugeCountsGetErrors) {
  // Arrange
  wire_batch batch;
  batch.messages.push_back(sample_wire_message());
  batch.messages.push_back(sample_wire_message());
  auto buf = encode_wire(batch);
  // The count is the first 4 bytes: 2^32 - 1 (above the limit), and the
  // limit itself in a buffer that holds two messages.
  auto huge = buf;
  std::memset(huge.data(), 0xFF, 4);
  auto many = buf;
  {
    std::vector<char> count;
    caf::binary_serializer sink{nullptr, count};
    uint32_t n = max_batch_messages;
    ASSERT_FALSE(sink(n));
    ASSERT_EQ(count.size(), 4u);
    std::copy(count.begin(), count.end(), many.begin());
  }
  // Act
  size_t errors = 0;
  for (size_t n = 0; n < buf.size(); ++n) {
    std::vector<char> cut(buf.begin(), buf.begin() + static_cast<ptrdiff_t>(n));
    wire_batch out;
    if (decode_wire(cut, out))
      ++errors;
  }
  wire_batch out1;
  wire_batch out2;
  auto err_huge = decode_wire(huge, out1);
  auto err_many = decode_wire(many, out2);
  // Assert
  EXPECT_EQ(errors, buf.size());
  EXPECT_TRUE(mentions(err_huge, "more than a batch holds"));
  EXPECT_TRUE(mentions(err_many, "8192 messages in"));
}
