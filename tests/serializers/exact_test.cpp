// Nothing lost in translation: each family returns exactly what was sent or
// refuses with a typed error. One test per way a value could come back
// changed (a double sent as an integer, a size prefix cut to 32 bits, a
// string cut at NUL) or bytes could mean something the encoder never writes
// (duplicate keys, members the type does not read, unused frames).

#include "test_types.hpp"

#include <bit>
#include <cstring>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace ferry::serializers::test {
namespace {

/// A cereal type naming its members, as cereal users write them.
struct named_pair {
  int32_t a = 0;
  int32_t b = 0;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(cereal::make_nvp("a", a), cereal::make_nvp("b", b));
  }
};

/// A plain aggregate with one member of each number width.
struct widths {
  uint8_t small = 0;
  int32_t mid = 0;
  float f = 0;
  double d = 0;
};

std::vector<std::byte> text_bytes(std::string_view text) {
  std::vector<std::byte> result(text.size());
  std::memcpy(result.data(), text.data(), text.size());
  return result;
}

/// Returns `err` rendered, or "no error".
std::string text_of(const caf::error& err) {
  return err ? render(err) : std::string{"no error"};
}

uint64_t bits(double x) {
  return std::bit_cast<uint64_t>(x);
}

uint32_t bits(float x) {
  return std::bit_cast<uint32_t>(x);
}

class exact : public ::testing::Test {
protected:
  registry sut;

  template <class T>
  caf::expected<T> decode_bytes(const std::string& family,
                                std::vector<std::byte> bytes) {
    auto p = make_payload(family, name_in<T>(sut), std::move(bytes));
    return sut.decode<T>(p, decode_with(family));
  }

  template <class T>
  caf::expected<T> decode_json(std::string_view text) {
    return decode_bytes<T>("cereal.json", text_bytes(text));
  }

  /// Encodes `x` with `family` and decodes it again.
  template <class T>
  caf::expected<T> roundtrip(const std::string& family, const T& x) {
    auto p = sut.encode(x, encode_with(family));
    if (!p)
      return std::move(p.error());
    auto wire = over_the_wire(*p);
    if (!wire)
      return std::move(wire.error());
    return sut.decode<T>(*wire, decode_with(family));
  }

  /// Returns the bytes of `x`'s only frame in `family`.
  template <class T>
  std::vector<std::byte> frame_of(const std::string& family, const T& x) {
    auto p = sut.encode(x, encode_with(family));
    if (!p || p->frames.size() != 1)
      return {};
    auto b = p->frames[0].bytes();
    return {b.begin(), b.end()};
  }
};

// -- msgpack: doubles stay doubles -------------------------------------------

TEST_F(exact, MsgpackKeepsNegativeZeroBitForBit) {
  auto y = roundtrip("msgpack", -0.0);
  ASSERT_TRUE(y) << render(y.error());
  EXPECT_EQ(bits(*y), bits(-0.0));
  auto f = roundtrip("msgpack", -0.0f);
  ASSERT_TRUE(f) << render(f.error());
  EXPECT_EQ(bits(*f), bits(-0.0f));
}

TEST_F(exact, MsgpackWritesIntegralDoublesAsFloat64) {
  // 7.0 must reach Python as the float 7.0, not the integer 7.
  EXPECT_EQ(frame_of("msgpack", 7.0),
            bytes_of({0xcb, 0x40, 0x1c, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(frame_of("msgpack", 9007199254740992.0), // 2^53
            bytes_of({0xcb, 0x43, 0x40, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(frame_of("msgpack", 7.0f), bytes_of({0xca, 0x40, 0xe0, 0, 0}));
}

TEST_F(exact, MsgpackKeepsNanPayloads) {
  for (uint32_t b : {0x7f800001u, 0xffc00123u, 0x7fc00000u}) {
    auto y = roundtrip("msgpack", std::bit_cast<float>(b));
    ASSERT_TRUE(y) << render(y.error());
    EXPECT_EQ(bits(*y), b) << std::hex << b;
  }
  for (uint64_t b : {0x7ff0000000000001ull, 0xfff8000000000abcull}) {
    auto y = roundtrip("msgpack", std::bit_cast<double>(b));
    ASSERT_TRUE(y) << render(y.error());
    EXPECT_EQ(bits(*y), b) << std::hex << b;
  }
}

TEST_F(exact, MsgpackReadsAnIntegerIntoADoubleOnlyWhenItIsExact) {
  // Arrange: 7 and 2^53 + 1 as msgpack integers.
  auto seven = bytes_of({0x07});
  auto odd = bytes_of({0xcf, 0x00, 0x20, 0, 0, 0, 0, 0, 0x01});
  // Act
  auto a = decode_bytes<double>("msgpack", seven);
  auto b = decode_bytes<double>("msgpack", odd);
  auto c = decode_bytes<float>("msgpack", bytes_of({0xce, 0x01, 0, 0, 0x01}));
  // Assert
  ASSERT_TRUE(a) << render(a.error());
  EXPECT_EQ(*a, 7.0);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error(), errc::inexact_value) << render(b.error());
  EXPECT_NE(render(b.error()).find("9007199254740993"), std::string::npos)
    << render(b.error());
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error(), errc::inexact_value) << render(c.error());
}

TEST_F(exact, MsgpackReadsAFloat64IntoAFloatOnlyWhenItIsExact) {
  auto half = decode_bytes<float>(
    "msgpack", bytes_of({0xcb, 0x3f, 0xe0, 0, 0, 0, 0, 0, 0}));
  auto tenth = decode_bytes<float>(
    "msgpack", bytes_of({0xcb, 0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a}));
  ASSERT_TRUE(half) << render(half.error());
  EXPECT_EQ(*half, 0.5f);
  ASSERT_FALSE(tenth);
  EXPECT_EQ(tenth.error(), errc::inexact_value) << render(tenth.error());
}

TEST_F(exact, MsgpackRefusesStringsThatAreNotUtf8) {
  // Encoding: msgpack's str holds UTF-8 text.
  auto p = sut.encode(std::string{"a\xff"}, encode_with("msgpack"));
  ASSERT_FALSE(p);
  EXPECT_NE(render(p.error()).find("invalid_text"), std::string::npos)
    << render(p.error());
  // Decoding: an invalid byte, and a UTF-16 surrogate written as UTF-8.
  auto bad = decode_bytes<std::string>("msgpack", bytes_of({0xa2, 'a', 0xff}));
  auto surrogate = decode_bytes<std::string>(
    "msgpack", bytes_of({0xa3, 0xed, 0xa0, 0x80}));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), errc::invalid_text) << render(bad.error());
  EXPECT_NE(render(bad.error()).find("offset 2"), std::string::npos)
    << render(bad.error());
  ASSERT_FALSE(surrogate);
  EXPECT_EQ(surrogate.error(), errc::invalid_text)
    << render(surrogate.error());
}

TEST_F(exact, MsgpackRefusesARecordWithMoreMembersThanTheType) {
  // point{1, 2.5, "p"} is [1, 2.5, "p"]; a fourth element is not point's.
  auto x = decode_bytes<point>(
    "msgpack", bytes_of({0x94, 0x01, 0xcb, 0x40, 0x04, 0, 0, 0, 0, 0, 0, 0xa1,
                         'p', 0x04}));
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::member_mismatch) << render(x.error());
}

TEST_F(exact, MsgpackRefusalNamesTheMember) {
  // point's member #1 is a double; here it is a string.
  auto x = decode_bytes<point>(
    "msgpack", bytes_of({0x93, 0x01, 0xa1, 'x', 0xa1, 'p'}));
  ASSERT_FALSE(x);
  EXPECT_NE(render(x.error()).find("member #1"), std::string::npos)
    << render(x.error());
}

// -- caf: size prefixes and floating point ------------------------------------

TEST_F(exact, CafRefusesSizePrefixesAbove32Bits) {
  // Arrange: 2^32 + 1 elements in CAF's 5-byte varint, then one element.
  auto above = bytes_of({0x81, 0x80, 0x80, 0x80, 0x10, 0, 0, 0, 42});
  auto exactly = bytes_of({0x80, 0x80, 0x80, 0x80, 0x10});
  // Act
  auto a = decode_bytes<std::vector<int32_t>>("caf", above);
  auto b = decode_bytes<std::vector<int32_t>>("caf", exactly);
  auto s = decode_bytes<std::string>("caf", exactly);
  // Assert
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error(), errc::length_out_of_range) << render(a.error());
  EXPECT_NE(render(a.error()).find("4294967297"), std::string::npos)
    << render(a.error());
  EXPECT_NE(render(a.error()).find("offset"), std::string::npos);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error(), errc::length_out_of_range) << render(b.error());
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error(), errc::length_out_of_range) << render(s.error());
}

TEST_F(exact, CafRefusesNegativeZeroNamingTheMember) {
  // CAF 0.17's IEEE 754 packing writes -0.0 as 0.
  auto p = sut.encode(point{1, -0.0, "p"}, encode_with("caf"));
  ASSERT_FALSE(p);
  auto text = render(p.error());
  EXPECT_NE(text.find("inexact_value"), std::string::npos) << text;
  EXPECT_NE(text.find("member #1"), std::string::npos) << text;
}

TEST_F(exact, CafRefusesFloatingPointBitsItsEncoderNeverWrites) {
  // The sign bit alone (CAF reads a negative subnormal), and infinity.
  auto sign = decode_bytes<double>("caf", bytes_of({0x80, 0, 0, 0, 0, 0, 0, 0}));
  auto inf = decode_bytes<double>("caf", bytes_of({0x7f, 0xf0, 0, 0, 0, 0, 0, 0}));
  auto finf = decode_bytes<float>("caf", bytes_of({0x7f, 0x80, 0, 0}));
  for (auto* x : {&sign, &inf}) {
    ASSERT_FALSE(*x);
    EXPECT_EQ(x->error(), errc::inexact_value) << render(x->error());
  }
  ASSERT_FALSE(finf);
  EXPECT_EQ(finf.error(), errc::inexact_value) << render(finf.error());
}

TEST_F(exact, CafRefusesInVectorsWhatItRefusesInValues) {
  // Vectors of numbers are written and read in one loop: the same checks
  // as one value at a time.
  auto zero = sut.encode(std::vector<double>{1.0, -0.0}, encode_with("caf"));
  auto nan = sut.encode(std::vector<float>{std::nanf("")}, encode_with("caf"));
  auto tiny = sut.encode(std::vector<double>{1.0, 4.9e-324},
                         encode_with("caf"));
  // Two elements: 1.0, then infinity's bits.
  auto inf = decode_bytes<std::vector<double>>(
    "caf", bytes_of({0x02, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x7f, 0xf0, 0, 0, 0,
                     0, 0, 0}));
  // The refusal names the element's offset: after the size and the
  // elements before it.
  for (auto [x, offset] : {std::pair{&zero, "offset 9"},
                           std::pair{&nan, "offset 1"},
                           std::pair{&tiny, "offset 9"}}) {
    ASSERT_FALSE(*x);
    auto text = render(x->error());
    EXPECT_NE(text.find("inexact_value"), std::string::npos) << text;
    EXPECT_NE(text.find(offset), std::string::npos) << text;
  }
  ASSERT_FALSE(inf);
  EXPECT_EQ(inf.error(), errc::inexact_value) << render(inf.error());
}

TEST_F(exact, CafRefusesVectorsClaimingMoreNumbersThanTheBytesHold) {
  // Three floats claimed, two present: refused before anything is read.
  auto x = decode_bytes<std::vector<float>>(
    "caf", bytes_of({0x03, 0x3f, 0x80, 0, 0, 0x3f, 0x80, 0, 0}));
  // Two uint16 claimed, one and a half present.
  auto y = decode_bytes<std::vector<uint16_t>>("caf",
                                               bytes_of({0x02, 0, 1, 0}));
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::truncated_frame) << render(x.error());
  EXPECT_NE(render(x.error()).find("3 elements"), std::string::npos)
    << render(x.error());
  ASSERT_FALSE(y);
  EXPECT_EQ(y.error(), errc::truncated_frame) << render(y.error());
}

// -- cereal.json: strings, members, numbers -----------------------------------

TEST_F(exact, JsonRefusesNulInsideAString) {
  auto x = decode_json<std::string>(R"({"value0": "a\u0000b"})");
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::invalid_text) << render(x.error());
  EXPECT_NE(render(x.error()).find("offset"), std::string::npos);
}

TEST_F(exact, JsonRefusesInvalidUtf8) {
  auto x = decode_json<std::string>("{\"value0\": \"a\xff\"}");
  auto overlong = decode_json<std::string>("{\"value0\": \"\xc0\xaf\"}");
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::invalid_text) << render(x.error());
  ASSERT_FALSE(overlong);
  EXPECT_EQ(overlong.error(), errc::invalid_text)
    << render(overlong.error());
}

TEST_F(exact, JsonRefusesLoneSurrogates) {
  for (auto text : {R"({"value0": "\udc00"})", R"({"value0": "x\ud800"})",
                    R"({"value0": "\ud800\u0041"})"}) {
    auto x = decode_json<std::string>(text);
    ASSERT_FALSE(x) << text;
    EXPECT_EQ(x.error(), errc::invalid_text) << render(x.error());
  }
}

TEST_F(exact, JsonRefusesAMemberTheTypeDoesNotRead) {
  auto x = decode_json<point>(
    R"({"value0": {"value0": 1, "value1": 2.5, "value2": "p", "value3": 9}})");
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::member_mismatch) << render(x.error());
  EXPECT_NE(render(x.error()).find("value3"), std::string::npos)
    << render(x.error());
}

TEST_F(exact, JsonRefusesAMissingMember) {
  auto x = decode_json<point>(R"({"value0": {"value0": 1, "value1": 2.5}})");
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::member_mismatch) << render(x.error());
}

TEST_F(exact, JsonRefusesMembersWithOtherNames) {
  auto x = decode_json<point>(R"({"value0": {"x": 1, "y": 2.5, "label": "p"}})");
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::member_mismatch) << render(x.error());
  EXPECT_NE(render(x.error()).find("\"x\""), std::string::npos)
    << render(x.error());
}

TEST_F(exact, JsonRefusesReorderedMembers) {
  auto good = decode_json<named_pair>(R"({"value0": {"a": 1, "b": 2}})");
  auto x = decode_json<named_pair>(R"({"value0": {"b": 2, "a": 1}})");
  ASSERT_TRUE(good) << render(good.error());
  EXPECT_EQ(good->a, 1);
  EXPECT_EQ(good->b, 2);
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::member_mismatch) << render(x.error());
}

TEST_F(exact, JsonRefusesDataAfterTheValue) {
  auto member = decode_json<int32_t>(R"({"value0": 1, "value1": 2})");
  auto text = decode_json<int32_t>(R"({"value0": 1} {"value0": 2})");
  ASSERT_FALSE(member);
  EXPECT_EQ(member.error(), errc::member_mismatch) << render(member.error());
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error(), errc::trailing_bytes) << render(text.error());
}

TEST_F(exact, JsonRefusesNumbersTheMemberCannotHoldExactly) {
  auto wide = decode_json<widths>(
    R"({"value0": {"value0": 300, "value1": 1, "value2": 0.5, "value3": 1}})");
  auto fraction = decode_json<widths>(
    R"({"value0": {"value0": 1, "value1": 2.5, "value2": 0.5, "value3": 1}})");
  auto narrow = decode_json<widths>(
    R"({"value0": {"value0": 1, "value1": 1, "value2": 0.1, "value3": 1}})");
  auto big = decode_json<widths>(
    R"({"value0": {"value0": 1, "value1": 1, "value2": 0.5, "value3": 9007199254740993}})");
  for (auto* x : {&wide, &fraction, &narrow, &big}) {
    ASSERT_FALSE(*x);
    EXPECT_EQ(x->error(), errc::inexact_value) << render(x->error());
  }
  EXPECT_NE(render(wide.error()).find("member #0"), std::string::npos)
    << render(wide.error());
  EXPECT_NE(render(narrow.error()).find("member #2"), std::string::npos)
    << render(narrow.error());
}

TEST_F(exact, JsonReadsIntegersIntoDoublesWhenExact) {
  auto x = decode_json<widths>(
    R"({"value0": {"value0": 1, "value1": -7, "value2": 3, "value3": 9007199254740992}})");
  ASSERT_TRUE(x) << render(x.error());
  EXPECT_EQ(x->f, 3.0f);
  EXPECT_EQ(x->d, 9007199254740992.0);
}

TEST_F(exact, JsonKeepsNumbersCerealWritesWithTrailingZeros) {
  // cereal writes doubles below 1e21 in fixed notation: this one as
  // 11068527370611720000.0, 21 digits of which the trailing zeros are no
  // significant ones.
  for (double x : {11068527370611720000.0, -9.8765432109876543e20, 1e20}) {
    auto y = roundtrip("cereal.json", x);
    ASSERT_TRUE(y) << render(y.error());
    EXPECT_EQ(bits(*y), bits(x));
  }
}

TEST_F(exact, JsonRefusesNanPayloadsItCannotWrite) {
  // JSON has one NaN: the default quiet NaN comes back, no other.
  auto quiet = roundtrip("cereal.json", std::numeric_limits<double>::quiet_NaN());
  ASSERT_TRUE(quiet) << render(quiet.error());
  EXPECT_EQ(bits(*quiet), bits(std::numeric_limits<double>::quiet_NaN()));
  auto p = sut.encode(point{1, std::bit_cast<double>(0x7ff8000000000123ull), ""},
                      encode_with("cereal.json"));
  ASSERT_FALSE(p);
  auto text = render(p.error());
  EXPECT_NE(text.find("inexact_value"), std::string::npos) << text;
  EXPECT_NE(text.find("member #1"), std::string::npos) << text;
}

TEST_F(exact, JsonRefusesNanPayloadsInASplitArrayToo) {
  // Arrange: 64 KiB of doubles travel as a JSON head and their bytes; the
  // family carries the same values in both forms.
  auto xs = std::make_shared<std::vector<double>>(8192, 0.5);
  (*xs)[100] = std::bit_cast<double>(0x7ff8000000000123ull);
  encode_options eo = encode_with("cereal.json");
  eo.keep_alive = xs;
  auto split = make_payload(
    "cereal.json", name_in<std::vector<double>>(sut),
    text_bytes(R"({"elements": 8192, "element_bytes": 8})"));
  std::vector<std::byte> elements(xs->size() * sizeof(double));
  std::memcpy(elements.data(), xs->data(), elements.size());
  split.header.frame_sizes.push_back(elements.size());
  split.frames.emplace_back(std::move(elements));
  // Act
  auto sent = sut.encode(*xs, eo);
  auto read = sut.decode<std::vector<double>>(split,
                                              decode_with("cereal.json"));
  // Assert
  ASSERT_FALSE(sent);
  EXPECT_NE(render(sent.error()).find("inexact_value"), std::string::npos)
    << render(sent.error());
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error(), errc::inexact_value) << render(read.error());
  EXPECT_NE(render(read.error()).find("element 100"), std::string::npos)
    << render(read.error());
}

TEST_F(exact, JsonRefusesInvalidUtf8OnEncode) {
  auto p = sut.encode(std::string{"\xed\xa0\x80"}, encode_with("cereal.json"));
  ASSERT_FALSE(p);
  EXPECT_NE(render(p.error()).find("invalid_text"), std::string::npos)
    << render(p.error());
}

// -- every structured family: keys, frames, trailing data ---------------------

template <class Family>
class exact_family : public exact {};

using structured_families
  = ::testing::Types<cereal_binary_family, cereal_portable_family,
                     cereal_json_family, msgpack_family, caf_family>;

TYPED_TEST_SUITE(exact_family, structured_families);

/// Encodes `dupes` (which may hold equal keys) and decodes it as `Unique`.
template <class Unique, class Dupes>
caf::error decode_as(registry& sut, const char* family, const Dupes& dupes) {
  auto p = sut.encode(dupes, encode_with(family));
  if (!p)
    return std::move(p.error());
  p->header.type_name = name_in<Unique>(sut);
  auto y = sut.decode<Unique>(*p, decode_with(family));
  return y ? caf::error{} : std::move(y.error());
}

TYPED_TEST(exact_family, DuplicateMapKeysAreRefused) {
  // Arrange: a multimap writes what a map with a key twice would be.
  std::multimap<int32_t, int32_t> dupes{{1, 10}, {1, 20}, {2, 30}};
  // Act
  auto ordered = decode_as<std::map<int32_t, int32_t>>(this->sut,
                                                       TypeParam::name, dupes);
  auto hashed = decode_as<std::unordered_map<int32_t, int32_t>>(
    this->sut, TypeParam::name, dupes);
  // Assert
  EXPECT_EQ(ordered, errc::duplicate_key) << text_of(ordered);
  EXPECT_EQ(hashed, errc::duplicate_key) << text_of(hashed);
  EXPECT_NE(text_of(ordered).find(TypeParam::name), std::string::npos);
}

TYPED_TEST(exact_family, DuplicateSetElementsAreRefused) {
  std::multiset<std::string> dupes{"a", "b", "b"};
  auto ordered = decode_as<std::set<std::string>>(this->sut, TypeParam::name,
                                                  dupes);
  auto hashed = decode_as<std::unordered_set<std::string>>(
    this->sut, TypeParam::name, dupes);
  EXPECT_EQ(ordered, errc::duplicate_key) << text_of(ordered);
  EXPECT_EQ(hashed, errc::duplicate_key) << text_of(hashed);
}

TYPED_TEST(exact_family, DuplicateKeysInsideAnAggregateAreRefused) {
  // shape's tags: a std::map<std::string, int32_t> member.
  struct shape_with_dupes {
    std::string name;
    std::vector<point> corners;
    std::multimap<std::string, int32_t> tags;
  };
  auto err = decode_as<shape>(this->sut, TypeParam::name,
                              shape_with_dupes{"s", {}, {{"k", 1}, {"k", 2}}});
  EXPECT_EQ(err, errc::duplicate_key) << text_of(err);
  EXPECT_NE(text_of(err).find("member #2"), std::string::npos) << text_of(err);
}

TYPED_TEST(exact_family, AFrameTheTypeDoesNotReadIsRefused) {
  // Arrange: a point's payload with one frame more.
  auto p = this->sut.encode(point{1, 2.5, "p"}, encode_with(TypeParam::name));
  ASSERT_TRUE(p) << render(p.error());
  p->frames.emplace_back(byte_ramp(16));
  p->header.frame_sizes.push_back(16);
  // Act
  auto y = this->sut.template decode<point>(*p, decode_with(TypeParam::name));
  // Assert
  ASSERT_FALSE(y);
  EXPECT_EQ(y.error(), errc::unused_frame) << render(y.error());
  EXPECT_NE(render(y.error()).find("frame 1"), std::string::npos)
    << render(y.error());
}

TYPED_TEST(exact_family, BytesAfterTheValueAreRefused) {
  auto bytes = this->frame_of(TypeParam::name, point{1, 2.5, "p"});
  ASSERT_FALSE(bytes.empty());
  // A second value after the first (JSON: a second document).
  auto second = std::string{TypeParam::name} == "cereal.json"
                  ? text_bytes(" {}")
                  : bytes;
  bytes.insert(bytes.end(), second.begin(), second.end());
  auto y = this->template decode_bytes<point>(TypeParam::name, bytes);
  ASSERT_FALSE(y);
  EXPECT_EQ(y.error(), errc::trailing_bytes) << render(y.error());
}

} // namespace
} // namespace ferry::serializers::test
