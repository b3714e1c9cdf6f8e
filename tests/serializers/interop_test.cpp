// Frames decode with the libraries alone: plain cereal, plain CAF, and
// Python's msgpack module from Debian's python3-msgpack.

#include "python_runner.hpp"
#include "test_types.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <cereal/archives/binary.hpp>
#include <cereal/archives/json.hpp>
#include <cereal/archives/portable_binary.hpp>
#include <cereal/types/vector.hpp>

#include <cstring>
#include <map>
#include <sstream>
#include <utility>

namespace ferry::serializers::test {
namespace {

std::string as_string(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

/// Reads `bytes` into `out` with plain CAF, no ferry.
template <class T>
caf::error read_with_plain_caf(std::span<const std::byte> bytes, T& out) {
  caf::binary_deserializer source{nullptr,
                                  reinterpret_cast<const char*>(bytes.data()),
                                  bytes.size()};
  return source(out);
}

/// Checks that the caf family writes exactly plain CAF's bytes for `in`, and
/// that plain CAF and ferry each read the other's bytes back to `in`.
template <class T>
void expect_same_bytes_as_plain_caf(T in) {
  registry sut;
  std::vector<char> plain;
  caf::binary_serializer sink{nullptr, plain};
  ASSERT_FALSE(sink(in));
  auto p = sut.encode(in, encode_with("caf"));
  ASSERT_TRUE(p) << render(p.error());
  auto bytes = p->frames[0].bytes();
  T by_caf;
  auto err = read_with_plain_caf(bytes, by_caf);
  std::vector<std::byte> plain_bytes(plain.size());
  std::memcpy(plain_bytes.data(), plain.data(), plain.size());
  auto back = sut.decode<T>(
    make_payload("caf", p->header.type_name, std::move(plain_bytes)),
    decode_with("caf"));
  EXPECT_EQ(as_string(bytes), std::string(plain.begin(), plain.end()));
  EXPECT_FALSE(err);
  EXPECT_EQ(by_caf, in);
  ASSERT_TRUE(back) << render(back.error());
  EXPECT_EQ(*back, in);
}

/// A type written the way a cereal user writes it, with no ferry in it.
struct plain_cereal_record {
  int64_t id = 0;
  std::string name;
  std::vector<double> values;
  std::map<std::string, int32_t> tags;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(id, name, values, tags);
  }
};

TEST(interop, PortableFrameDecodesWithPlainCereal) {
  // Arrange
  registry sut;
  plain_cereal_record in{42, "answer", {1.5, -2.25}, {{"a", 1}, {"b", -2}}};
  auto p = sut.encode(in, encode_with("cereal.portable"));
  ASSERT_TRUE(p);
  // Act: plain cereal, no ferry.
  std::istringstream is{as_string(p->frames[0].bytes())};
  cereal::PortableBinaryInputArchive ar{is};
  plain_cereal_record out;
  ar(out);
  // Assert
  EXPECT_EQ(out.id, 42);
  EXPECT_EQ(out.name, "answer");
  EXPECT_EQ(out.values, in.values);
  EXPECT_EQ(out.tags, in.tags);
}

TEST(interop, BinaryAndJsonFramesDecodeWithPlainCereal) {
  registry sut;
  std::map<std::string, std::vector<int32_t>> in{{"x", {1, 2}}, {"y", {}}};
  auto pb = sut.encode(in, encode_with("cereal.binary"));
  auto pj = sut.encode(in, encode_with("cereal.json"));
  ASSERT_TRUE(pb && pj);
  std::map<std::string, std::vector<int32_t>> from_binary;
  std::map<std::string, std::vector<int32_t>> from_json;
  {
    std::istringstream is{as_string(pb->frames[0].bytes())};
    cereal::BinaryInputArchive ar{is};
    ar(from_binary);
  }
  {
    std::istringstream is{as_string(pj->frames[0].bytes())};
    cereal::JSONInputArchive ar{is};
    ar(from_json);
  }
  EXPECT_EQ(from_binary, in);
  EXPECT_EQ(from_json, in);
}

TEST(interop, PlainCerealOutputDecodesWithFerry) {
  plain_cereal_record in{7, "seven", {7.0}, {{"k", 7}}};
  std::ostringstream os;
  {
    cereal::PortableBinaryOutputArchive ar{os};
    ar(in);
  }
  registry sut;
  auto text = os.str();
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  auto name = sut.encode(in, encode_with("cereal.portable"))->header.type_name;
  auto out = sut.decode<plain_cereal_record>(
    make_payload("cereal.portable", name, bytes),
    decode_with("cereal.portable"));
  ASSERT_TRUE(out) << render(out.error());
  EXPECT_EQ(out->name, "seven");
  EXPECT_EQ(out->values, in.values);
}

TEST(interop, CafFrameDecodesWithPlainCaf) {
  registry sut;
  std::vector<std::string> in{"a", "bc", ""};
  auto p = sut.encode(in, encode_with("caf"));
  ASSERT_TRUE(p);
  std::vector<std::string> out;
  auto err = read_with_plain_caf(p->frames[0].bytes(), out);
  EXPECT_FALSE(err);
  EXPECT_EQ(out, in);
}

TEST(interop, BitVectorsInContainersMatchPlainCafByteForByte) {
  // Arrange: ferry ends the sequence CAF leaves open for each
  // std::vector<bool>; the bytes must stay CAF's both ways.
  std::vector<std::vector<bool>> in{{true, false, true}, {}, {false}};
  in.emplace_back(20, true);
  // Act and assert
  expect_same_bytes_as_plain_caf(in);
}

TEST(interop, ByteVectorsInOneBlockMatchPlainCafByteForByte) {
  // Arrange: ferry writes std::vector<std::byte> as one block; plain CAF
  // walks it element by element. 300 bytes: a two-byte size prefix.
  auto in = byte_ramp(300);
  // Act and assert
  expect_same_bytes_as_plain_caf(in);
}

} // namespace

/// Columns of numbers, as a plain aggregate (no inspect of its own). Outside
/// the anonymous namespace: ferry's reflection of it must link.
struct number_columns {
  std::vector<float> xs;
  std::vector<uint16_t> ys;
  std::map<std::string, std::vector<double>> named;
  std::vector<std::byte> raw;
  std::pair<std::vector<int8_t>, std::vector<uint64_t>> both;

  bool operator==(const number_columns&) const = default;
};

/// Numbers behind an inspect of the type's own: CAF's element-wise walk,
/// through ferry's writer and reader.
struct inspected_numbers {
  double x = 0;
  float y = 0;
  std::vector<float> ys;
  std::vector<double> zs;

  bool operator==(const inspected_numbers&) const = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, inspected_numbers& v) {
  return f(caf::meta::type_name("inspected_numbers"), v.x, v.y, v.ys, v.zs);
}

namespace {

TEST(interop, NumbersInAnInspectOfTheTypesOwnMatchPlainCafByteForByte) {
  expect_same_bytes_as_plain_caf(
    inspected_numbers{-1e-300, 3.4028235e38f, {0.0f, -0.1f, 1.1754944e-38f},
                      {1.7976931348623157e308, 2.2250738585072014e-308}});
}

TEST(interop, NumberVectorsInOneLoopMatchPlainCafByteForByte) {
  // Arrange: ferry writes and reads vectors of numbers in one loop; plain
  // CAF walks them element by element. Floating-point values across the
  // exponent range (CAF packs each with its own IEEE 754 code).
  std::vector<double> doubles{0.0, 1.0, -1.5, 3.141592653589793, 1e300,
                              -2.2250738585072014e-308, 1.7976931348623157e308,
                              0.1, -1e-300};
  std::vector<float> floats{0.0f, 1.0f, -1.5f, 3.4028235e38f, 1.1754944e-38f,
                            -0.1f, 65504.0f};
  // Act and assert
  expect_same_bytes_as_plain_caf(doubles);
  expect_same_bytes_as_plain_caf(floats);
  expect_same_bytes_as_plain_caf(std::vector<int8_t>{-128, 0, 127});
  expect_same_bytes_as_plain_caf(std::vector<uint8_t>{0, 200, 255});
  expect_same_bytes_as_plain_caf(std::vector<int16_t>{-32768, -1, 32767});
  expect_same_bytes_as_plain_caf(std::vector<uint16_t>{0, 1, 65535});
  expect_same_bytes_as_plain_caf(
    std::vector<int32_t>{INT32_MIN, -1, 0, INT32_MAX});
  expect_same_bytes_as_plain_caf(std::vector<uint32_t>{0, 1, UINT32_MAX});
  expect_same_bytes_as_plain_caf(
    std::vector<int64_t>{INT64_MIN, -1, 0, INT64_MAX});
  expect_same_bytes_as_plain_caf(std::vector<uint64_t>{0, 1, UINT64_MAX});
  expect_same_bytes_as_plain_caf(std::vector<double>{});
  expect_same_bytes_as_plain_caf(
    std::vector<std::vector<double>>{doubles, {}, {2.5}});
  expect_same_bytes_as_plain_caf(
    number_columns{floats, {1, 2, 300}, {{"a", doubles}, {"b", {}}},
                   byte_ramp(130), {{-1, 2}, {UINT64_MAX}}});
}

TEST(interop, ByteVectorsInOneBlockMatchPlainCerealByteForByte) {
  registry sut;
  auto in = byte_ramp(1000);
  for (auto family : {"cereal.binary", "cereal.portable"}) {
    // What plain cereal writes for a vector of enums: its size tag, then
    // each element.
    auto element_wise = [&](auto& ar) {
      ar(cereal::make_size_tag(static_cast<cereal::size_type>(in.size())));
      for (auto b : in)
        ar(b);
    };
    std::ostringstream os;
    if (std::string{family} == "cereal.binary") {
      cereal::BinaryOutputArchive ar{os};
      element_wise(ar);
    } else {
      cereal::PortableBinaryOutputArchive ar{os};
      element_wise(ar);
    }
    auto p = sut.encode(in, encode_with(family));
    ASSERT_TRUE(p) << render(p.error());
    auto text = as_string(p->frames[0].bytes());
    EXPECT_EQ(text, os.str()) << family;
    std::istringstream is{text};
    std::vector<std::byte> out;
    if (std::string{family} == "cereal.binary") {
      cereal::BinaryInputArchive ar{is};
      ar(out);
    } else {
      cereal::PortableBinaryInputArchive ar{is};
      ar(out);
    }
    EXPECT_EQ(out, in) << family;
  }
}

/// Runs Debian's Python on a msgpack frame; returns what the script printed.
std::string run_python_msgpack(std::span<const std::byte> frame) {
  return run_python("import msgpack, sys\n"
                    "v = msgpack.unpackb(open(sys.argv[1], 'rb').read(), "
                    "raw=False, strict_map_key=False)\n"
                    "print(repr(v))\n",
                    frame);
}

TEST(interop, MsgpackFrameDecodesWithPythonMsgpack) {
  // Arrange
  registry sut;
  record r{5, "five", {0.5f, 1.5f}, {{"a", 1}, {"b", 2}}};
  auto p = sut.encode(r, encode_with("msgpack"));
  ASSERT_TRUE(p);
  // Act
  auto out = run_python_msgpack(p->frames[0].bytes());
  // Assert: an aggregate is the array of its fields.
  EXPECT_EQ(out, "[5, 'five', [0.5, 1.5], {'a': 1, 'b': 2}]");
}

TEST(interop, MsgpackScalarsAndNestingDecodeWithPythonMsgpack) {
  registry sut;
  std::map<std::string, std::vector<std::optional<int64_t>>> v{
    {"k", {1, std::nullopt, -3}}};
  auto p = sut.encode(v, encode_with("msgpack"));
  ASSERT_TRUE(p);
  EXPECT_EQ(run_python_msgpack(p->frames[0].bytes()),
            "{'k': [1, None, -3]}");
}

} // namespace
} // namespace ferry::serializers::test
