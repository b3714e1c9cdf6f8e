// The fixed payload header codec.

#include "test_types.hpp"

#include <random>

namespace ferry::serializers::test {
namespace {

payload_header example() {
  payload_header h;
  h.family = "cereal.binary";
  h.type_name = "ns::thing<int>";
  h.version = 3;
  h.frame_sizes = {10, 0, uint64_t{1} << 20};
  h.stand_in = "ns::proxy";
  return h;
}

TEST(header, RoundTripKeepsEveryField) {
  auto bytes = encode_header(example());
  auto sut = decode_header(bytes, limits{});
  ASSERT_TRUE(sut) << render(sut.error());
  EXPECT_EQ(*sut, example());
}

TEST(header, EveryTruncationIsATypedError) {
  auto bytes = encode_header(example());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto sut = decode_header(std::span{bytes}.first(n), limits{});
    ASSERT_FALSE(sut) << n;
    EXPECT_EQ(sut.error().category(), caf::atom("ferry_ser"));
  }
}

TEST(header, TrailingByteIsRefused) {
  auto bytes = encode_header(example());
  bytes.push_back(std::byte{0});
  EXPECT_EQ(decode_header(bytes, limits{}).error(), errc::trailing_bytes);
}

TEST(header, BadMagicIsRefused) {
  auto bytes = encode_header(example());
  bytes[0] = std::byte{'X'};
  EXPECT_EQ(decode_header(bytes, limits{}).error(), errc::malformed_header);
}

TEST(header, LimitsBoundNamesFramesAndTotalSize) {
  limits lim;
  lim.max_name_bytes = 8;
  EXPECT_EQ(decode_header(encode_header(example()), lim).error(),
            errc::length_out_of_range);
  lim = limits{};
  lim.max_frames = 2;
  EXPECT_EQ(decode_header(encode_header(example()), lim).error(),
            errc::length_out_of_range);
  lim = limits{};
  lim.max_payload_bytes = 1000;
  EXPECT_EQ(decode_header(encode_header(example()), lim).error(),
            errc::payload_too_large);
}

TEST(header, HeaderAboveTheLimitsBlamesTheLimitNotTheSender) {
  // Arrange
  limits lim;
  lim.max_payload_bytes = 1000;
  auto bad_magic = encode_header(example());
  bad_magic[0] = std::byte{'X'};
  // Act
  auto too_large = render(decode_header(encode_header(example()), lim).error());
  auto malformed = render(decode_header(bad_magic, limits{}).error());
  // Assert: a well-formed header above this end's limits says which limit;
  // only a malformed one suspects the sender.
  EXPECT_NE(too_large.find("max_payload_bytes (1000)"), std::string::npos)
    << too_large;
  EXPECT_EQ(too_large.find("corrupt"), std::string::npos) << too_large;
  EXPECT_NE(malformed.find("corrupt"), std::string::npos) << malformed;
}

TEST(header, FrameSizesCannotOverflowTheTotal) {
  auto h = example();
  h.frame_sizes = {UINT64_MAX, 2};
  EXPECT_EQ(decode_header(encode_header(h), limits{}).error(),
            errc::payload_too_large);
}

TEST(header, NonPrintableOrEmptyFamilyIsRefused) {
  auto h = example();
  h.family = "bad\nname";
  EXPECT_EQ(decode_header(encode_header(h), limits{}).error(),
            errc::malformed_header);
  h.family = "";
  EXPECT_EQ(decode_header(encode_header(h), limits{}).error(),
            errc::malformed_header);
}

TEST(header, HugeFrameCountWithoutSizesIsRefusedWithoutAllocating) {
  auto h = example();
  h.frame_sizes.clear();
  auto bytes = encode_header(h);
  // Patch the frame count (last four bytes) to 2^32 - 1.
  for (size_t i = bytes.size() - 4; i < bytes.size(); ++i)
    bytes[i] = std::byte{0xff};
  limits lim;
  lim.max_frames = UINT32_MAX;
  EXPECT_EQ(decode_header(bytes, lim).error(), errc::truncated_frame);
}

TEST(header, RandomBytesNeverCrash) {
  std::mt19937_64 rng{3};
  auto base = encode_header(example());
  for (int i = 0; i < 5000; ++i) {
    auto bytes = base;
    bytes[rng() % bytes.size()] = static_cast<std::byte>(rng());
    bytes.resize(rng() % (bytes.size() + 4), std::byte{0x41});
    auto sut = decode_header(bytes, limits{});
    if (!sut) {
      EXPECT_EQ(sut.error().category(), caf::atom("ferry_ser"));
    }
  }
}

TEST(header, KeyAndFrameSizesMakeTheSameBytesAsTheWholeHeader) {
  // Arrange
  auto h = example();
  std::vector<frame> frames;
  for (auto n : h.frame_sizes)
    frames.emplace_back(std::vector<std::byte>(n));
  // Act
  auto key = encode_header_key(h);
  auto sut = encode_header(key, frames);
  // Assert
  EXPECT_EQ(sut, encode_header(h));
  EXPECT_EQ(header_key(sut).size(), key.size());
  EXPECT_TRUE(std::equal(key.begin(), key.end(), sut.begin()));
}

TEST(header, FrameSizesAfterAKeyReadAsDecodeHeaderReadsThem) {
  // Arrange
  auto bytes = encode_header(example());
  auto key = header_key(bytes);
  ASSERT_FALSE(key.empty());
  std::vector<uint64_t> sizes;
  // Act
  auto err = decode_frame_sizes(bytes, key.size(), limits{}, sizes);
  // Assert
  EXPECT_FALSE(err) << render(err);
  EXPECT_EQ(sizes, example().frame_sizes);
}

TEST(header, FrameSizesAfterAKeyKeepEveryCheckOfDecodeHeader) {
  auto bytes = encode_header(example());
  auto key_size = header_key(bytes).size();
  std::vector<uint64_t> sizes;
  // Truncated anywhere after the key, or the key itself cut.
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto err = decode_frame_sizes(std::span{bytes}.first(n), key_size,
                                  limits{}, sizes);
    ASSERT_TRUE(err) << n;
    EXPECT_EQ(err, errc::truncated_frame) << n;
  }
  // Limits and trailing bytes.
  limits lim;
  lim.max_frames = 2;
  EXPECT_EQ(decode_frame_sizes(bytes, key_size, lim, sizes),
            errc::length_out_of_range);
  lim = limits{};
  lim.max_payload_bytes = 1000;
  EXPECT_EQ(decode_frame_sizes(bytes, key_size, lim, sizes),
            errc::payload_too_large);
  bytes.push_back(std::byte{0});
  EXPECT_EQ(decode_frame_sizes(bytes, key_size, limits{}, sizes),
            errc::trailing_bytes);
}

TEST(header, KeyOfBytesTooShortForOneIsEmpty) {
  auto bytes = encode_header(example());
  auto key_size = header_key(bytes).size();
  for (size_t n = 0; n < key_size; ++n)
    EXPECT_TRUE(header_key(std::span{bytes}.first(n)).empty()) << n;
  EXPECT_EQ(header_key(std::span{bytes}.first(key_size)).size(), key_size);
}

TEST(header, KeyLengthsClaimingMoreThanTheBytesGiveNoKey) {
  // Arrange: the family's length field claims 65535 bytes.
  auto bytes = encode_header(example());
  bytes[3] = std::byte{0xff};
  bytes[4] = std::byte{0xff};
  // Act / Assert
  EXPECT_TRUE(header_key(bytes).empty());
}

} // namespace
} // namespace ferry::serializers::test
