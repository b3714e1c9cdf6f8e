// Containers of the other kind: cereal.json and msgpack read a container
// only in the kind their encoder writes it. cereal.json writes a sequence,
// set or map as a JSON array (a map as an array of {"key", "value"}
// objects) and a struct, pair, tuple, std::array or optional as an object;
// msgpack writes a map as a map, a byte vector as bin and the rest as
// arrays. A container of the other kind is refused with `member_mismatch`,
// naming where it is; what each family writes reads back.

#include "test_types.hpp"

#include <msgpack.hpp>

#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ferry::serializers::test {
namespace {

/// One member of each kind of container, nested ones included.
struct containers {
  std::vector<int32_t> list;
  std::set<std::string> names;
  std::map<std::string, int32_t> table;
  std::multimap<int32_t, int32_t> pairs_by_key;
  std::array<int16_t, 2> fixed{};
  std::pair<int32_t, std::string> pair;
  std::tuple<int32_t, bool> tuple;
  std::optional<std::vector<int32_t>> maybe;
  std::vector<std::map<std::string, point>> nested;
  std::vector<uint8_t> bytes;
  friend bool operator==(const containers&, const containers&) = default;
};

/// A plain aggregate without members (cereal.json: `{}`).
struct nothing {};

/// A plain aggregate with a version: written and read by member name.
struct versioned {
  static constexpr uint32_t ferry_version = 1;
  int32_t id = 0;
  std::string name;
};

std::vector<std::byte> text_bytes(std::string_view text) {
  std::vector<std::byte> result(text.size());
  std::memcpy(result.data(), text.data(), text.size());
  return result;
}

/// Returns the msgpack bytes `write(packer)` writes.
template <class F>
std::vector<std::byte> packed(F&& write) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk{buf};
  write(pk);
  auto p = reinterpret_cast<const std::byte*>(buf.data());
  return {p, p + buf.size()};
}

/// {1: 2}, a msgpack map of one entry.
std::vector<std::byte> one_entry_map() {
  return packed([](auto& pk) {
    pk.pack_map(1);
    pk.pack(1);
    pk.pack(2);
  });
}

/// Returns `err` rendered, or "no error".
std::string text_of(const caf::error& err) {
  return err ? render(err) : std::string{"no error"};
}

bool contains(const caf::error& err, std::string_view part) {
  return text_of(err).find(part) != std::string::npos;
}

/// Expects `err` to be `member_mismatch` with a text holding each of
/// `parts`.
void expect_mismatch(const caf::error& err,
                     std::initializer_list<std::string_view> parts) {
  EXPECT_EQ(err, errc::member_mismatch) << text_of(err);
  for (auto part : parts)
    EXPECT_TRUE(contains(err, part)) << "no \"" << part << "\" in "
                                     << text_of(err);
}

class container_kind : public ::testing::Test {
protected:
  registry sut;

  /// Decodes `bytes` as the one frame of a `T` in `family`; returns the
  /// refusal, or no error.
  template <class T>
  caf::error refusal(const std::string& family, std::vector<std::byte> bytes) {
    auto p = make_payload(family, name_in<T>(sut), std::move(bytes));
    auto x = sut.decode<T>(p, decode_with(family));
    return x ? caf::error{} : std::move(x.error());
  }

  template <class T>
  caf::error json_refusal(std::string_view text) {
    return refusal<T>("cereal.json", text_bytes(text));
  }

  template <class F>
  containers roundtrip(const char* family, const containers& x, F&& check) {
    auto p = sut.encode(x, encode_with(family));
    EXPECT_TRUE(p) << text_of(p ? caf::error{} : p.error());
    if (!p)
      return {};
    check(p->frames[0].bytes());
    auto y = sut.decode<containers>(*p, decode_with(family));
    EXPECT_TRUE(y) << text_of(y ? caf::error{} : y.error());
    return y ? *y : containers{};
  }
};

containers filled() {
  return containers{{1, 2, 3},
                    {"a", "b"},
                    {{"k", 1}, {"l", 2}},
                    {{1, 10}, {2, 20}},
                    {7, 8},
                    {5, "five"},
                    {6, true},
                    std::vector<int32_t>{9},
                    {{{"p", point{1, 2.5, "p"}}}, {}},
                    {0, 255}};
}

// -- cereal.json --------------------------------------------------------------

TEST_F(container_kind, JsonObjectWhereTheTypeReadsAListIsRefused) {
  // Arrange: a std::vector's elements as an object's members, in order and
  // under the names cereal gives unnamed members.
  auto text = R"({"value0": {"value0": 1, "value1": 2}})";
  // Act
  auto err = json_refusal<std::vector<int32_t>>(text);
  // Assert
  expect_mismatch(err, {"found an object", " at /value0 ",
                        "which cereal writes as an array"});
}

TEST_F(container_kind, JsonObjectWhereTheTypeReadsAMapIsRefused) {
  // Arrange: a map as most JSON writers write one; cereal writes an array
  // of {"key", "value"} objects.
  auto text = R"({"value0": {"k": 1, "l": 2}})";
  auto empty = R"({"value0": {}})";
  // Act
  auto err = json_refusal<std::map<std::string, int32_t>>(text);
  auto empty_err = json_refusal<std::map<std::string, int32_t>>(empty);
  // Assert
  expect_mismatch(err, {"a map as an array of"});
  expect_mismatch(empty_err, {"found an object"});
}

TEST_F(container_kind, JsonObjectWhereTheTypeReadsASetIsRefused) {
  auto err = json_refusal<std::set<int32_t>>(R"({"value0": {"value0": 1}})");
  expect_mismatch(err, {"std::set<int"});
}

TEST_F(container_kind, JsonArrayWhereTheTypeReadsAMapEntryIsRefused) {
  // Arrange: the map's second entry as a [key, value] pair.
  auto text = R"({"value0": [{"key": "k", "value": 1}, ["l", 2]]})";
  // Act
  auto err = json_refusal<std::map<std::string, int32_t>>(text);
  // Assert
  expect_mismatch(err, {"found an array", " at /value0/1 ",
                        "(first member \"key\")"});
}

TEST_F(container_kind, JsonArrayWhereTheTypeReadsARecordIsRefused) {
  auto err = json_refusal<point>(R"({"value0": [1, 2.5, "p"]})");
  expect_mismatch(err, {"where the type reads ferry::serializers::test::point, "
                        "which cereal writes as an object"});
}

TEST_F(container_kind, JsonArrayWhereAPairTupleStdArrayOrStructIsRefused) {
  // Act
  auto pair = json_refusal<std::pair<int32_t, int32_t>>(R"({"value0": [1, 2]})");
  auto tuple = json_refusal<std::tuple<int32_t, int32_t>>(
    R"({"value0": [1, 2]})");
  auto fixed = json_refusal<std::array<int32_t, 2>>(R"({"value0": [1, 2]})");
  auto none = json_refusal<nothing>(R"({"value0": []})");
  // Assert
  expect_mismatch(pair, {"std::pair<int, int>"});
  expect_mismatch(tuple, {"std::tuple<int, int>"});
  expect_mismatch(fixed, {"std::array<int, 2"});
  expect_mismatch(none, {"nothing, which cereal writes as an object"});
}

TEST_F(container_kind, JsonArrayWhereAnOwnSerializeReadsMembersIsRefused) {
  // account's serialize reads an owner and cents, which cereal writes as
  // the members "value0" and "value1" of an object.
  auto err = json_refusal<account>(R"({"value0": ["o", 5]})");
  expect_mismatch(err, {"account, which cereal writes as an object "
                        "(first member \"value0\")"});
}

TEST_F(container_kind, JsonArrayWhereAVersionedRecordBelongsIsRefused) {
  auto err = json_refusal<versioned>(R"({"value0": [1, "x"]})");
  expect_mismatch(err, {"found an array", "versioned"});
}

TEST_F(container_kind, JsonRefusalNamesTheNestedMember) {
  // Arrange: shape's tags (member #2) as an object; its corners' first
  // point (in member #1) as an array.
  auto tags = R"({"value0": {"value0": "s", "value1": [],
                             "value2": {"k": 1}}})";
  auto corner = R"({"value0": {"value0": "s",
                               "value1": [[1, 2.5, "p"]], "value2": []}})";
  // Act
  auto tags_err = json_refusal<shape>(tags);
  auto corner_err = json_refusal<shape>(corner);
  // Assert
  expect_mismatch(tags_err, {" at /value0/value2 ", "in member #2"});
  expect_mismatch(corner_err, {" at /value0/value1/0 ", "in member #1"});
}

TEST_F(container_kind, JsonThatCerealWritesReadsBack) {
  // Arrange
  auto x = filled();
  // Act
  auto y = roundtrip("cereal.json", x, [](std::span<const std::byte> b) {
    std::string text(reinterpret_cast<const char*>(b.data()), b.size());
    // A map is an array of {"key", "value"} objects; a pair an object.
    EXPECT_NE(text.find("\"value2\": [\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\"first\": 5"), std::string::npos) << text;
  });
  // Assert
  EXPECT_EQ(y, x);
}

// -- msgpack ------------------------------------------------------------------

TEST_F(container_kind, MsgpackMapWhereTheTypeReadsAnArrayIsRefused) {
  // Arrange
  auto map = one_entry_map();
  // Act
  auto list = refusal<std::vector<int32_t>>("msgpack", map);
  auto set = refusal<std::set<int32_t>>("msgpack", map);
  auto fixed = refusal<std::array<int32_t, 1>>("msgpack", map);
  auto pair = refusal<std::pair<int32_t, int32_t>>("msgpack", map);
  auto tuple = refusal<std::tuple<int32_t>>("msgpack", map);
  auto multiset = refusal<std::multiset<int32_t>>("msgpack", map);
  // Assert
  for (auto* err : {&list, &set, &fixed, &pair, &tuple, &multiset})
    expect_mismatch(*err, {"found a msgpack map of 1 entries",
                           "which ferry writes as an array"});
  expect_mismatch(list, {"where the type reads std::vector<int"});
}

TEST_F(container_kind, MsgpackMapWhereAPlainAggregateIsAnArrayIsRefused) {
  // Arrange: point's members by name, as a writer of records as maps
  // writes them.
  auto map = packed([](auto& pk) {
    pk.pack_map(3);
    pk.pack(std::string{"x"});
    pk.pack(1);
    pk.pack(std::string{"y"});
    pk.pack(2.5);
    pk.pack(std::string{"label"});
    pk.pack(std::string{"p"});
  });
  // Act
  auto err = refusal<point>("msgpack", map);
  // Assert
  expect_mismatch(err, {"found a msgpack map of 3 entries",
                        "where the type reads ferry::serializers::test::point"});
}

TEST_F(container_kind, MsgpackArrayWhereTheTypeReadsAMapIsRefused) {
  // Arrange: [["k", 1]], a map's entries as pairs.
  auto pairs = packed([](auto& pk) {
    pk.pack_array(1);
    pk.pack_array(2);
    pk.pack(std::string{"k"});
    pk.pack(1);
  });
  // Act
  auto ordered = refusal<std::map<std::string, int32_t>>("msgpack", pairs);
  auto hashed = refusal<std::unordered_map<std::string, int32_t>>("msgpack",
                                                                  pairs);
  auto multi = refusal<std::multimap<std::string, int32_t>>("msgpack", pairs);
  // Assert
  for (auto* err : {&ordered, &hashed, &multi})
    expect_mismatch(*err, {"found a msgpack array of 1 elements",
                           "which ferry writes as a map"});
}

TEST_F(container_kind, MsgpackArrayOrMapWhereTheTypeReadsBinIsRefused) {
  // Arrange: [1, 2] and {1: 2} where a byte vector, written as bin, belongs.
  auto array = packed([](auto& pk) {
    pk.pack_array(2);
    pk.pack(1);
    pk.pack(2);
  });
  // Act
  auto from_array = refusal<std::vector<uint8_t>>("msgpack", array);
  auto from_map = refusal<std::vector<uint8_t>>("msgpack", one_entry_map());
  // Assert
  expect_mismatch(from_array, {"which ferry writes as a bin"});
  expect_mismatch(from_map, {"which ferry writes as a bin"});
}

TEST_F(container_kind, MsgpackRefusalNamesTheNestedMember) {
  // Arrange: shape is [name, corners, tags]; first its tags (member #2) as
  // an array, then its first corner (in member #1) as a map.
  auto tags = packed([](auto& pk) {
    pk.pack_array(3);
    pk.pack(std::string{"s"});
    pk.pack_array(0);
    pk.pack_array(0);
  });
  auto corner = packed([](auto& pk) {
    pk.pack_array(3);
    pk.pack(std::string{"s"});
    pk.pack_array(1);
    pk.pack_map(0);
    pk.pack_map(0);
  });
  // Act
  auto tags_err = refusal<shape>("msgpack", tags);
  auto corner_err = refusal<shape>("msgpack", corner);
  // Assert
  expect_mismatch(tags_err, {"which ferry writes as a map", "in member #2"});
  expect_mismatch(corner_err,
                  {"where the type reads ferry::serializers::test::point",
                   "in member #1"});
}

TEST_F(container_kind, MsgpackThatFerryWritesReadsBack) {
  // Arrange
  auto x = filled();
  // Act
  auto y = roundtrip("msgpack", x, [](std::span<const std::byte> b) {
    // containers is an array of its 10 members (fixarray 0x9a).
    ASSERT_FALSE(b.empty());
    EXPECT_EQ(b[0], std::byte{0x9a});
  });
  // Assert
  EXPECT_EQ(y, x);
}

TEST_F(container_kind, EmptyContainersOfTheRightKindReadBack) {
  // Arrange: each container empty.
  containers x;
  // Act
  auto json = roundtrip("cereal.json", x, [](auto) {});
  auto mp = roundtrip("msgpack", x, [](auto) {});
  // Assert
  EXPECT_EQ(json, x);
  EXPECT_EQ(mp, x);
}

} // namespace
} // namespace ferry::serializers::test
