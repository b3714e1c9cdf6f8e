// Two builds of one type in cereal.binary and cereal.portable: the reader
// walks the writer's bytes by the writer's shape (writer_shapes.hpp,
// detail/cereal_resolve.hpp). Each case encodes with one version of a type
// and decodes with another, both registered under one name in registries of
// their own, as two nodes would; shapes the writer could send to mislead the
// reader are refused with typed errors, never read as a wrong value.
#include "ferry/serializers/all.hpp"
#include "ferry/serializers/writer_shapes.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

namespace ferry::serializers {
namespace {

enum class colour : int16_t { red, green = 300 };

namespace v1 {

struct part {
  static constexpr uint32_t ferry_version = 1;
  int32_t qty = 0;
  std::string name;
};

struct order {
  static constexpr uint32_t ferry_version = 1;
  int32_t id = 0;
  std::string customer;
  std::vector<part> parts;
  std::string note;
  double price = 0;
};

} // namespace v1

namespace v2 {

struct part {
  static constexpr uint32_t ferry_version = 2;
  std::string name; // reordered
  int64_t qty = 0;  // widened
  bool urgent = true; // added
};

struct order {
  static constexpr uint32_t ferry_version = 2;
  int64_t id = 0;           // widened
  std::vector<part> parts;  // nested type changed, moved up
  std::string client;       // `customer` renamed
  float price = 0;          // narrowed
  std::optional<int32_t> priority = 7; // added
  // `note` removed
};

} // namespace v2

/// Every shape ferry's binary reader skips, followed by a member it reads.
struct wide {
  static constexpr uint32_t ferry_version = 2;
  std::string s;
  std::u16string s16;
  std::vector<std::string> list;
  std::map<std::string, std::vector<int32_t>> map;
  std::multimap<int8_t, bool> multimap;
  std::array<int16_t, 3> array{};
  std::array<std::tuple<>, 5> empties{};
  std::tuple<int8_t, std::string> tuple;
  std::optional<std::string> some;
  std::optional<std::string> none;
  std::variant<int32_t, std::string> variant;
  colour c = colour::red;
  std::set<int64_t> set;
  std::vector<bool> bits;
  v2::part record;
  char ch = 0;
  double d = 0;
  uint64_t last = 0;
};

struct narrow {
  static constexpr uint32_t ferry_version = 1;
  uint64_t last = 0;
};

struct with_ptr {
  static constexpr uint32_t ferry_version = 2;
  std::unique_ptr<int32_t> ptr;
  uint64_t last = 0;
};

constexpr std::array<const char*, 2> binary_families{"cereal.binary",
                                                     "cereal.portable"};

/// Encodes `x` (registered as "order") with `family`, and decodes it as `To`
/// (registered as "order" too) with the writer's shape of `From`.
template <class To, class From>
caf::expected<To> cross(const From& x, const std::string& family,
                        std::string writer_shape = shape_of<From>()) {
  registry writer;
  writer.add_type<From>("order");
  registry reader;
  reader.add_type<To>("order");
  encode_options eopts;
  eopts.serializers = {family};
  auto p = writer.encode(x, eopts);
  if (!p)
    return p.error();
  decode_options dopts;
  dopts.deserializers = {family};
  auto shapes = std::make_shared<writer_shapes>();
  if (!shapes->add("order", std::move(writer_shape)))
    return caf::make_error(errc::malformed_frame, "malformed writer shape");
  dopts.writer_shapes = shapes;
  return reader.decode<To>(*p, dopts);
}

TEST(writer_shapes, ANewReaderReadsAnOldWritersBytes) {
  v1::order x{42, "ada", {{3, "bolt"}, {-1, "nut"}}, "fragile", 2.5};
  for (auto family : binary_families) {
    auto y = cross<v2::order>(x, family);
    ASSERT_TRUE(y) << family << ": " << caf::to_string(y.error());
    EXPECT_EQ(y->id, 42);
    EXPECT_EQ(y->client, "") << "a renamed member is another member";
    EXPECT_EQ(y->price, 2.5f);
    EXPECT_EQ(y->priority, std::optional<int32_t>{7}) << "the default stays";
    ASSERT_EQ(y->parts.size(), 2u);
    EXPECT_EQ(y->parts[0].name, "bolt");
    EXPECT_EQ(y->parts[0].qty, 3);
    EXPECT_TRUE(y->parts[0].urgent);
    EXPECT_EQ(y->parts[1].name, "nut");
    EXPECT_EQ(y->parts[1].qty, -1);
  }
}

TEST(writer_shapes, AnOldReaderReadsANewWritersBytes) {
  v2::order x{7, {{"gear", 12, false}}, "bob", 0.25f, std::nullopt};
  for (auto family : binary_families) {
    auto y = cross<v1::order>(x, family);
    ASSERT_TRUE(y) << family << ": " << caf::to_string(y.error());
    EXPECT_EQ(y->id, 7);
    EXPECT_EQ(y->customer, "");
    EXPECT_EQ(y->note, "");
    EXPECT_EQ(y->price, 0.25);
    ASSERT_EQ(y->parts.size(), 1u);
    EXPECT_EQ(y->parts[0].qty, 12);
    EXPECT_EQ(y->parts[0].name, "gear");
  }
}

TEST(writer_shapes, AValueTheReaderCannotHoldIsRefusedNotCut) {
  v2::order big;
  big.id = int64_t{1} << 40;
  v2::order fine_id;
  fine_id.id = 1;
  fine_id.price = 0.1f;
  v1::order precise;
  precise.price = 0.1; // no float equals it
  for (auto family : binary_families) {
    auto y = cross<v1::order>(big, family);
    ASSERT_FALSE(y) << family;
    EXPECT_EQ(y.error(), errc::inexact_value) << caf::to_string(y.error());
    EXPECT_NE(caf::to_string(y.error()).find("1099511627776"),
              std::string::npos)
      << caf::to_string(y.error());
    auto z = cross<v2::order>(precise, family);
    ASSERT_FALSE(z) << family;
    EXPECT_EQ(z.error(), errc::inexact_value) << caf::to_string(z.error());
    auto w = cross<v1::order>(fine_id, family);
    ASSERT_TRUE(w) << family << ": " << caf::to_string(w.error());
    EXPECT_EQ(w->price, static_cast<double>(0.1f)) << "float to double exact";
  }
}

TEST(writer_shapes, EveryDelimitedShapeIsSkipped) {
  wide x;
  x.s = "text";
  x.s16 = u"wide";
  x.list = {"a", "", "bc"};
  x.map = {{"k", {1, 2, 3}}, {"", {}}};
  x.multimap = {{1, true}, {1, false}};
  x.array = {1, 2, 3};
  x.tuple = {4, "four"};
  x.some = "here";
  x.variant = std::string{"alt"};
  x.c = colour::green;
  x.set = {-1, 5};
  x.bits = {true, false, true};
  x.record = {"r", 9, false};
  x.ch = 'q';
  x.d = -0.0;
  x.last = 0xfeedfacecafebeef;
  for (auto family : binary_families) {
    auto y = cross<narrow>(x, family);
    ASSERT_TRUE(y) << family << ": " << caf::to_string(y.error());
    EXPECT_EQ(y->last, 0xfeedfacecafebeef) << family;
  }
}

TEST(writer_shapes, ShapesBridgeByFamily) {
  auto v1 = shape_of<v1::order>();
  auto v2 = shape_of<v2::order>();
  for (auto family : {"cereal.binary", "cereal.portable", "msgpack",
                      "cereal.json"}) {
    EXPECT_TRUE(shapes_bridge(family, v1, v2)) << family;
    EXPECT_TRUE(shapes_bridge(family, v2, v1)) << family;
  }
  EXPECT_FALSE(shapes_bridge("caf", v1, v2));
  EXPECT_FALSE(shapes_bridge("raw", v1, v2));
  // A member on one side only must be skippable in the binary families.
  auto ptr = shape_of<with_ptr>();
  auto plain = shape_of<narrow>();
  EXPECT_FALSE(shapes_bridge("cereal.binary", ptr, plain));
  EXPECT_FALSE(shapes_bridge("cereal.portable", plain, ptr));
  EXPECT_TRUE(shapes_bridge("msgpack", ptr, plain));
  EXPECT_TRUE(shapes_bridge("cereal.binary", shape_of<wide>(), plain));
  // Containers bridge in binary as lists, sets, maps and optionals only.
  EXPECT_TRUE(shapes_bridge("cereal.binary", "@1{a:list<i32>}",
                            "@2{a:list<i64>}"));
  EXPECT_FALSE(shapes_bridge("cereal.binary", "@1{a:list<i32>}",
                             "@2{a:set<i32>}"));
  EXPECT_FALSE(shapes_bridge("cereal.binary", "@1{a:array<i32,2>}",
                             "@2{a:array<i64,2>}"));
  EXPECT_FALSE(shapes_bridge("cereal.binary", "@1{a:f80}", "@2{a:f64}"));
  EXPECT_FALSE(shapes_bridge("cereal.binary", "@1{a:i32}", "@2{a:str}"));
  EXPECT_FALSE(shapes_bridge("cereal.binary", "{a:i32}", "{a:i64}"))
    << "records without a version never bridge";
  EXPECT_FALSE(shapes_bridge("cereal.binary", "@1{a:i32", "@2{a:i64}"));
}

TEST(writer_shapes, AShapeNamingAMemberTwiceIsRefused) {
  narrow x{5};
  for (auto family : binary_families) {
    auto y = cross<narrow>(x, family, "@2{last:u32,last:u32}");
    ASSERT_FALSE(y) << family;
    EXPECT_EQ(y.error(), errc::duplicate_key) << caf::to_string(y.error());
  }
}

TEST(writer_shapes, AShapeThatDoesNotMatchTheBytesIsRefused) {
  narrow x{5};
  for (auto family : binary_families) {
    // The shape claims more bytes than the writer wrote.
    auto y = cross<narrow>(x, family, "@2{extra:u64,last:u64}");
    ASSERT_FALSE(y) << family;
    EXPECT_EQ(y.error(), errc::truncated_frame) << caf::to_string(y.error());
    // The shape claims fewer.
    auto z = cross<narrow>(x, family, "@2{last:u32}");
    ASSERT_FALSE(z) << family;
    EXPECT_EQ(z.error(), errc::trailing_bytes) << caf::to_string(z.error());
    // A member of a type the reader cannot be read from.
    auto w = cross<narrow>(x, family, "@2{last:str}");
    ASSERT_FALSE(w) << family;
    EXPECT_EQ(w.error(), errc::member_mismatch) << caf::to_string(w.error());
    // A member ferry cannot skip.
    auto v = cross<narrow>(x, family, "@2{p:custom\"thing\",last:u64}");
    ASSERT_FALSE(v) << family;
    EXPECT_EQ(v.error(), errc::member_mismatch) << caf::to_string(v.error());
    EXPECT_NE(caf::to_string(v.error()).find("cannot skip"), std::string::npos);
  }
}

TEST(writer_shapes, HostileSizesInSkippedMembersAreBounded) {
  // A skipped list of empty records claims 2^60 elements: refused by the
  // size check, not looped over.
  narrow x{5};
  for (auto family : binary_families) {
    auto y = cross<narrow>(x, family,
                           "@2{hole:array<{},999999999>,last:u64}");
    ASSERT_TRUE(y) << family << ": " << caf::to_string(y.error());
    EXPECT_EQ(y->last, 5u);
    auto z = cross<narrow>(x, family, "@2{l:list<{}>}");
    ASSERT_FALSE(z) << family;
    EXPECT_EQ(z.error(), errc::length_out_of_range)
      << caf::to_string(z.error());
  }
}

TEST(writer_shapes, AShapeWhoseWalkSpinsIsStopped) {
  // Every element of a long list takes one byte and, by the sender's shape,
  // thousands of empty members: the walk stops at its step budget.
  std::string shape = "@2{l:list<{a:u8";
  for (int i = 0; i < 4000; ++i)
    shape += ",e" + std::to_string(i) + ":{}";
  shape += "}>,last:u64}";
  narrow x{5};
  // The bytes: a list of 4096 one-byte elements, then `last`.
  std::vector<std::byte> bytes(8 + 4096 + 8);
  uint64_t n = 4096;
  std::memcpy(bytes.data(), &n, 8);
  std::memcpy(bytes.data() + 8 + 4096, &x.last, 8);
  registry reader;
  reader.add_type<narrow>("order");
  payload p;
  p.header.family = "cereal.binary";
  p.header.type_name = "order";
  p.header.frame_sizes = {bytes.size()};
  p.frames.push_back(frame::view(bytes));
  decode_options dopts;
  dopts.deserializers = {"cereal.binary"};
  auto shapes = std::make_shared<writer_shapes>();
  ASSERT_TRUE(shapes->add("order", shape));
  dopts.writer_shapes = shapes;
  auto y = reader.decode<narrow>(p, dopts);
  ASSERT_FALSE(y);
  EXPECT_EQ(y.error(), errc::length_out_of_range) << caf::to_string(y.error());
  // The same shape with a short list is read.
  n = 4;
  std::memcpy(bytes.data(), &n, 8);
  bytes.erase(bytes.begin() + 8 + 4, bytes.begin() + 8 + 4096);
  p.header.frame_sizes = {bytes.size()};
  p.frames.clear();
  p.frames.push_back(frame::view(bytes));
  auto z = reader.decode<narrow>(p, dopts);
  ASSERT_TRUE(z) << caf::to_string(z.error());
  EXPECT_EQ(z->last, 5u);
}

TEST(writer_shapes, MalformedOrNonRecordShapesAreNotRecorded) {
  writer_shapes shapes;
  EXPECT_FALSE(shapes.add("a", "@1{x:i32"));
  EXPECT_FALSE(shapes.add("a", "list<i32>"));
  EXPECT_FALSE(shapes.add("a", std::string(max_shape_size + 1, '{')));
  EXPECT_TRUE(shapes.empty());
  EXPECT_TRUE(shapes.add("a", "@1{x:i32}"));
  ASSERT_NE(shapes.find("a"), nullptr);
  EXPECT_EQ(shapes.find("a")->fields.size(), 1u);
  EXPECT_EQ(shapes.find("b"), nullptr);
}

} // namespace
} // namespace ferry::serializers
