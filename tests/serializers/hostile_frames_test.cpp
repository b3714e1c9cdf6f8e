// Hostile input, frames: truncated, trailing, mislabelled, deeply nested,
// malformed text and random bytes are typed errors, never a crash.

#include "hostile_support.hpp"

#include <cstring>
#include <limits>
#include <random>

namespace ferry::serializers::test {
namespace {

using namespace hostile_inputs;

template <class T>
void expect_every_prefix_fails(registry& sut, const T& value,
                               const std::string& family) {
  auto p = sut.encode(value, encode_with(family));
  ASSERT_TRUE(p) << render(p.error());
  auto full = p->frames[0].bytes();
  for (size_t n = 0; n < full.size(); ++n) {
    auto cut = make_payload(family, p->header.type_name,
                            {full.begin(), full.begin() + n});
    auto x = sut.decode<T>(cut, decode_with(family));
    ASSERT_FALSE(x) << family << " accepted a prefix of " << n << " bytes";
    EXPECT_TRUE(is_typed_decode_error(x.error())) << render(x.error());
  }
}

TEST_F(hostile, EveryTruncationIsATypedError) {
  shape s{"tri", {{0, 0, "a"}, {1, 0, "b"}}, {{"color", 3}}};
  for (auto family : {"cereal.binary", "cereal.portable", "cereal.json",
                      "msgpack", "caf"})
    expect_every_prefix_fails(sut, s, family);
  expect_every_prefix_fails(sut, sample{1, 2, {3, 4, 5, 6}}, "raw");
}

TEST_F(hostile, EmptyFramesAreTypedErrors) {
  for (auto family : {"cereal.binary", "cereal.portable", "cereal.json",
                      "msgpack", "caf"}) {
    auto x = decode_bytes<shape>(family, {});
    ASSERT_FALSE(x) << family;
    EXPECT_TRUE(is_typed_decode_error(x.error())) << render(x.error());
  }
  auto r = decode_bytes<int64_t>("raw", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), errc::malformed_frame);
}

TEST_F(hostile, PayloadWithoutFramesIsRefused) {
  payload p;
  p.header.family = "cereal.binary";
  p.header.type_name = name_in<shape>(sut);
  auto x = sut.decode<shape>(p, decode_with("cereal.binary"));
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::frame_mismatch);
}

TEST_F(hostile, TrailingBytesAreRefused) {
  for (auto family : {"cereal.binary", "cereal.portable", "msgpack", "caf"}) {
    auto p = sut.encode(point{1, 2, "x"}, encode_with(family));
    ASSERT_TRUE(p);
    auto bytes = p->frames[0].release();
    bytes.push_back(std::byte{0});
    auto x = decode_bytes<point>(family, bytes);
    ASSERT_FALSE(x) << family;
    EXPECT_EQ(x.error(), errc::trailing_bytes) << render(x.error());
  }
}

TEST_F(hostile, WrongFamilyTypeVersionAndFramesAreTypedErrors) {
  auto good = sut.encode(point{1, 2, "x"}, encode_with("cereal.binary"));
  ASSERT_TRUE(good);
  auto opts = decode_with("cereal.binary");
  opts.deserializers.push_back("made.up");
  auto unknown = *good;
  unknown.header.family = "made.up";
  auto wrong_type = *good;
  wrong_type.header.type_name = "something_else";
  auto wrong_version = *good;
  wrong_version.header.version = 2;
  auto wrong_size = *good;
  wrong_size.header.frame_sizes[0] += 1;
  auto extra_frame = *good;
  extra_frame.frames.emplace_back(std::vector<std::byte>(3));
  EXPECT_EQ(sut.decode<point>(unknown, opts).error(), errc::unknown_family);
  EXPECT_EQ(sut.decode<point>(wrong_type, opts).error(), errc::type_mismatch);
  EXPECT_EQ(sut.decode<point>(wrong_version, opts).error(),
            errc::version_mismatch);
  EXPECT_EQ(sut.decode<point>(wrong_size, opts).error(), errc::frame_mismatch);
  EXPECT_EQ(sut.decode<point>(extra_frame, opts).error(),
            errc::frame_mismatch);
  EXPECT_EQ(sut.decode<shape>(*good, opts).error(), errc::type_mismatch);
}

TEST_F(hostile, OversizedPayloadIsRefusedBothWays) {
  std::vector<double> xs(100);
  auto eopts = encode_with("cereal.binary");
  eopts.limits.max_payload_bytes = 100;
  auto refused = sut.encode(xs, eopts);
  auto p = sut.encode(xs, encode_with("cereal.binary"));
  ASSERT_TRUE(p);
  auto dopts = decode_with("cereal.binary");
  dopts.limits.max_payload_bytes = 100;
  auto x = sut.decode<std::vector<double>>(*p, dopts);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), errc::payload_too_large);
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::payload_too_large);
}

TEST_F(hostile, InvalidBoolByteIsRefused) {
  auto x = decode_bytes<bool>("cereal.binary", bytes_of({2}));
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::malformed_frame);
}

TEST_F(hostile, SharedPointerIdOfAnotherTypeIsRefused) {
  // Arrange: b refers to the object a defined (a node, not a point).
  two_kinds v{std::make_shared<node>(node{1, {2}}), nullptr};
  for (auto family : {"cereal.binary", "cereal.portable"}) {
    auto p = sut.encode(v, encode_with(family));
    ASSERT_TRUE(p);
    auto bytes = p->frames[0].release();
    ASSERT_GE(bytes.size(), 4u);
    bytes.resize(bytes.size() - 4);
    append_u32(bytes, 1);
    // Act
    auto x = decode_bytes<two_kinds>(family, bytes);
    // Assert
    ASSERT_FALSE(x) << family;
    EXPECT_EQ(x.error(), errc::malformed_frame) << render(x.error());
  }
  auto p = sut.encode(v, encode_with("cereal.json"));
  ASSERT_TRUE(p);
  auto bytes = p->frames[0].release();
  std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  auto at = text.rfind("\"id\": 0");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 7, "\"id\": 1");
  std::vector<std::byte> patched(text.size());
  std::memcpy(patched.data(), text.data(), text.size());
  auto x = decode_bytes<two_kinds>("cereal.json", patched);
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::malformed_frame) << render(x.error());
}

TEST_F(hostile, DeepNestingIsRefusedInEveryFamily) {
  constexpr size_t levels = 20000;
  std::vector<std::byte> binary;
  for (size_t i = 0; i < levels; ++i)
    append_u64(binary, 1);
  std::vector<std::byte> msgpack(levels, std::byte{0x91});
  msgpack.push_back(std::byte{0x90});
  std::vector<std::byte> json;
  for (char c : std::string{"{\"value0\": "})
    json.push_back(static_cast<std::byte>(c));
  json.resize(json.size() + levels, std::byte{'['});
  std::vector<std::byte> caf(levels, std::byte{0x01});
  caf.push_back(std::byte{0x00});
  EXPECT_EQ(decode_bytes<tree>("cereal.binary", binary).error(),
            errc::nesting_too_deep);
  EXPECT_EQ(decode_bytes<tree>("msgpack", msgpack).error(),
            errc::nesting_too_deep);
  EXPECT_EQ(decode_bytes<tree>("cereal.json", json).error(),
            errc::nesting_too_deep);
  EXPECT_EQ(decode_bytes<tree>("caf", caf).error(), errc::nesting_too_deep);
}

TEST_F(hostile, CafCountsNoNestingForBitVectorsReadBefore) {
  // Arrange: CAF 0.17 leaves a sequence open for every std::vector<bool>;
  // 200 of them side by side must not read as 200 levels of nesting.
  std::vector<std::vector<bool>> rows(200, std::vector<bool>{true, false});
  rows[7].clear();
  std::vector<flag_row> table;
  for (int32_t i = 0; i < 200; ++i)
    table.push_back(flag_row{i, std::vector<bool>(i % 11, true)});
  std::map<int32_t, std::vector<bool>> by_id{{1, {true}}, {2, {}}};
  auto p = sut.encode(rows, encode_with("caf"));
  auto q = sut.encode(table, encode_with("caf"));
  auto r = sut.encode(by_id, encode_with("caf"));
  ASSERT_TRUE(p && q && r);
  // Act
  auto x = sut.decode<std::vector<std::vector<bool>>>(*p, decode_with("caf"));
  auto y = sut.decode<std::vector<flag_row>>(*q, decode_with("caf"));
  auto z = sut.decode<std::map<int32_t, std::vector<bool>>>(*r,
                                                            decode_with("caf"));
  // Assert
  ASSERT_TRUE(x) << render(x.error());
  EXPECT_EQ(*x, rows);
  ASSERT_TRUE(y) << render(y.error());
  EXPECT_EQ(*y, table);
  ASSERT_TRUE(z) << render(z.error());
  EXPECT_EQ(*z, by_id);
}

TEST_F(hostile, JsonBracketsAndDigitsInsideStringsAreText) {
  // Arrange: brackets deeper than any limit, a long run of digits and
  // escaped quotes and backslashes, all inside one string value.
  std::string value = std::string(20000, '[') + "\\\"" + std::string(500, '9')
                      + "\\\\\"{{" + std::string(3, '\\');
  auto p = sut.encode(value, encode_with("cereal.json"));
  ASSERT_TRUE(p) << render(p.error());
  // Act
  auto x = sut.decode<std::string>(*p, decode_with("cereal.json"));
  // Assert
  ASSERT_TRUE(x) << render(x.error());
  EXPECT_EQ(*x, value);
  // The same brackets outside the string still count.
  auto text = std::string{"{\"value0\": \"a\\\"\","} + std::string(20000, '[');
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  EXPECT_EQ(decode_bytes<tree>("cereal.json", bytes).error(),
            errc::nesting_too_deep);
}

TEST_F(hostile, JsonNumbersLongerThanCerealWritesAreRefused) {
  // rapidjson's exact strtod has undefined behaviour on such numbers.
  auto text = std::string{"{\"value0\": 1"} + std::string(400, '0')
              + "e-38609621}";
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  auto x = decode_bytes<double>("cereal.json", bytes);
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::malformed_frame);
  // ~400 leading zeros make rapidjson read outside its power table.
  text = "{\"value0\": 0." + std::string(400, '0') + "1}";
  bytes.resize(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  EXPECT_EQ(decode_bytes<double>("cereal.json", bytes).error(),
            errc::malformed_frame);
  text = "{\"value0\": 0e-300}";
  bytes.resize(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  EXPECT_EQ(decode_bytes<double>("cereal.json", bytes).error(),
            errc::malformed_frame);
  // 21 significant digits starting 18446744073709551615 and a 5 or more:
  // rapidjson's significand rounds up to 2^64, i.e. zero (found by
  // fuzz_cereal_json), whatever the zeros before them.
  for (std::string number :
       {"0.184467440737095516156", "184467440737095516156",
        "18446744073709551615.6", "0.000184467440737095516159e2",
        // a zero that ends at a second '.' (found by fuzz_cereal_json)
        "0.000000000000000000000000000.484"}) {
    text = "{\"value0\": " + number + "}";
    bytes.resize(text.size());
    std::memcpy(bytes.data(), text.data(), text.size());
    EXPECT_EQ(decode_bytes<double>("cereal.json", bytes).error(),
              errc::malformed_frame)
      << number;
  }
  auto largest = sut.encode(std::numeric_limits<uint64_t>::max(),
                            encode_with("cereal.json"));
  ASSERT_TRUE(largest);
  auto back = sut.decode<uint64_t>(*largest, decode_with("cereal.json"));
  ASSERT_TRUE(back) << render(back.error());
  EXPECT_EQ(*back, std::numeric_limits<uint64_t>::max());
  auto zero = sut.encode(0.0, encode_with("cereal.json"));
  ASSERT_TRUE(zero);
  EXPECT_TRUE(sut.decode<double>(*zero, decode_with("cereal.json")));
  auto ok = sut.encode(-1.2345678901234567e-300, encode_with("cereal.json"));
  ASSERT_TRUE(ok);
  auto y = sut.decode<double>(*ok, decode_with("cereal.json"));
  ASSERT_TRUE(y) << render(y.error());
  EXPECT_EQ(*y, -1.2345678901234567e-300);
}

TEST_F(hostile, CafRefusesInfinityAndNanInsteadOfHanging) {
  // CAF 0.17's pack754 never returns for these; ferry refuses them.
  for (double x : {std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity(),
                   std::numeric_limits<double>::quiet_NaN()}) {
    auto p = sut.encode(x, encode_with("caf"));
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), errc::no_family_can_encode);
    EXPECT_NE(render(p.error()).find("loops forever"), std::string::npos);
  }
  EXPECT_TRUE(sut.encode(std::numeric_limits<double>::infinity(),
                         encode_with("cereal.binary")));
}

TEST_F(hostile, RandomBytesNeverCrashAnyDecoder) {
  std::mt19937_64 rng{42};
  for (auto family : {"cereal.binary", "cereal.portable", "cereal.json",
                      "msgpack", "caf", "raw"}) {
    for (int i = 0; i < 300; ++i) {
      std::vector<std::byte> bytes(rng() % 200);
      for (auto& b : bytes)
        b = static_cast<std::byte>(rng());
      auto x = decode_bytes<shape>(family, bytes);
      if (!x) {
        EXPECT_EQ(x.error().category(), caf::atom("ferry_ser"));
      }
      auto y = decode_bytes<std::vector<sample>>(family, bytes);
      if (!y) {
        EXPECT_EQ(y.error().category(), caf::atom("ferry_ser"));
      }
    }
  }
}

TEST_F(hostile, BitFlipsInValidFramesNeverCrashAnyDecoder) {
  std::mt19937_64 rng{7};
  auto a = std::make_shared<node>(node{1, {1, 2, 3}});
  graph g{{a, nullptr, a}};
  record r{5, "rec", {1.5f, 2.5f}, {{"a", 1}}};
  for (auto family : {"cereal.binary", "cereal.portable", "cereal.json",
                      "msgpack", "caf"}) {
    auto p = sut.encode(r, encode_with(family));
    ASSERT_TRUE(p);
    auto base = p->frames[0].release();
    for (int i = 0; i < 400; ++i) {
      auto bytes = base;
      for (int k = 0; k < 3; ++k)
        bytes[rng() % bytes.size()] ^= static_cast<std::byte>(1 << (rng() % 8));
      auto x = decode_bytes<record>(family, bytes);
      if (!x) {
        EXPECT_EQ(x.error().category(), caf::atom("ferry_ser"));
      }
    }
  }
  for (auto family : {"cereal.binary", "cereal.portable", "cereal.json"}) {
    auto p = sut.encode(g, encode_with(family));
    ASSERT_TRUE(p);
    auto base = p->frames[0].release();
    for (int i = 0; i < 400; ++i) {
      auto bytes = base;
      bytes[rng() % bytes.size()] ^= static_cast<std::byte>(1 << (rng() % 8));
      auto x = decode_bytes<graph>(family, bytes);
      if (!x) {
        EXPECT_EQ(x.error().category(), caf::atom("ferry_ser"));
      }
    }
  }
}

TEST_F(hostile, RawRefusesFramesOfTheWrongSize) {
  auto x = decode_bytes<std::vector<double>>("raw", std::vector<std::byte>(7));
  auto y = decode_bytes<sample>("raw", std::vector<std::byte>(sizeof(sample) + 1));
  ASSERT_FALSE(x);
  ASSERT_FALSE(y);
  EXPECT_EQ(x.error(), errc::malformed_frame);
  EXPECT_EQ(y.error(), errc::malformed_frame);
}

TEST_F(hostile, RawViewOfMisalignedMemoryIsRefusedButCopyWorks) {
  // Arrange: doubles starting one byte into a buffer.
  std::vector<double> xs{1.5, 2.5, 3.5};
  auto storage = std::make_shared<std::vector<std::byte>>(
    xs.size() * sizeof(double) + 1);
  std::memcpy(storage->data() + 1, xs.data(), xs.size() * sizeof(double));
  payload p;
  p.header.family = "raw";
  p.header.type_name = name_in<std::vector<double>>(sut);
  p.header.frame_sizes = {xs.size() * sizeof(double)};
  p.frames.push_back(frame::view(
    std::span<const std::byte>{storage->data() + 1, xs.size() * sizeof(double)},
    storage));
  // Act
  auto view = sut.decode<std::span<const double>>(p, decode_with("raw"));
  auto copy = sut.decode<std::vector<double>>(p, decode_with("raw"));
  // Assert
  ASSERT_FALSE(view);
  EXPECT_EQ(view.error(), errc::misaligned_frame);
  ASSERT_TRUE(copy);
  EXPECT_EQ(*copy, xs);
}

} // namespace
} // namespace ferry::serializers::test
