// Type shapes: member names read at compile time, the shape text of each
// kind of member, and the first difference between two builds' shapes,
// including shapes a hostile peer could send.
#include "ferry/serializers/all.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace ferry::serializers {
namespace {

struct line {
  std::string item;
  int32_t qty = 0;
};

enum class status : uint8_t { open, closed };

struct order {
  static constexpr uint32_t ferry_version = 3;
  uint64_t id = 0;
  std::vector<line> lines;
  std::map<std::string, double> prices;
  std::optional<status> state;
  std::variant<int16_t, std::string> note;
  std::array<float, 2> point{};
  std::set<char> flags;
  std::unique_ptr<line> first;
};

struct with_inspect {
  int32_t a = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, with_inspect& x) {
  return f(x.a);
}

std::optional<std::string> diff(std::string_view mine, std::string_view theirs) {
  return shape_difference("order", mine, theirs, "node v2", "node v1");
}

TEST(shape, MemberNamesAreReadAtCompileTime) {
  constexpr auto names = member_names<order>();
  static_assert(names.size() == 8);
  EXPECT_EQ(names[0], "id");
  EXPECT_EQ(names[1], "lines");
  EXPECT_EQ(names[7], "first");
  EXPECT_EQ(member_names<line>()[1], "qty");
}

TEST(shape, DescribesEveryKindOfMember) {
  EXPECT_EQ(shape_of<line>(), "{item:str,qty:i32}");
  EXPECT_EQ(shape_of<order>(),
            "@3{id:u64,lines:list<{item:str,qty:i32}>,prices:map<str,f64>,"
            "state:opt<enum<u8>>,note:variant<i16,str>,point:array<f32,2>,"
            "flags:set<char>,first:ptr<{item:str,qty:i32}>}");
}

TEST(shape, TellsAPairFromATupleOfTwo) {
  // cereal's JSON names their members differently (first/second,
  // tuple_element0/1), so a peer writing JSON by the shape needs to know.
  EXPECT_EQ((shape_of<std::pair<int32_t, std::string>>()), "pair<i32,str>");
  EXPECT_EQ((shape_of<std::tuple<int32_t, std::string>>()), "tuple<i32,str>");
  EXPECT_NE(diff("{p:pair<i32,str>}", "{p:tuple<i32,str>}"), std::nullopt);
  EXPECT_EQ(diff("{p:pair<i32,str>}", "{p:pair<i32,str>}"), std::nullopt);
}

TEST(shape, TypesWithTheirOwnSerializationAreNamedWithTheirVersion) {
  auto text = shape_of<with_inspect>();
  EXPECT_TRUE(text.starts_with("custom\"")) << text;
  EXPECT_NE(text.find("with_inspect"), std::string::npos) << text;
}

TEST(shape, EqualShapesHaveNoDifference) {
  auto text = shape_of<order>();
  EXPECT_EQ(shape_difference("order", text, text, "a", "b"), std::nullopt);
  EXPECT_EQ(shape_fingerprint_text(text).size(), 16u);
  EXPECT_NE(shape_fingerprint(text), shape_fingerprint(shape_of<line>()));
}

TEST(shape, NamesAMemberAddedOrRemoved) {
  EXPECT_EQ(diff("{id:u64,note:str}", "{id:u64}"),
            "member 'order.note' (str) exists on node v2 but not on node v1");
  EXPECT_EQ(diff("{id:u64}", "{id:u64,note:str}"),
            "member 'order.note' (str) exists on node v1 but not on node v2");
}

TEST(shape, ARenameIsAMemberOnEachSideOnly) {
  EXPECT_EQ(diff("{id:u64,label:str}", "{id:u64,note:str}"),
            "member 'order.label' (str) exists on node v2 but not on node v1");
}

TEST(shape, NamesAWidenedMember) {
  EXPECT_EQ(diff("{id:u64,qty:i64}", "{id:u64,qty:i32}"),
            "'order.qty' is i64 on node v2 and i32 on node v1");
}

TEST(shape, NamesReorderedMembers) {
  EXPECT_EQ(diff("{a:i32,b:str}", "{b:str,a:i32}"),
            "the members of 'order' are in another order: (a, b) on node v2, "
            "(b, a) on node v1");
}

TEST(shape, FollowsNestedTypesToTheMember) {
  EXPECT_EQ(diff("{lines:list<{item:str,qty:i64}>}",
                 "{lines:list<{item:str,qty:i32}>}"),
            "'order.lines[].qty' is i64 on node v2 and i32 on node v1");
  EXPECT_EQ(diff("{m:map<str,{x:f32}>}", "{m:map<str,{x:f64}>}"),
            "'order.m[].x' is f32 on node v2 and f64 on node v1");
  EXPECT_EQ(diff("{m:map<i32,str>}", "{m:map<i64,str>}"),
            "'order.m[key]' is i32 on node v2 and i64 on node v1");
}

TEST(shape, NamesAnotherVersion) {
  EXPECT_EQ(diff("@2{a:i32}", "{a:i32}"),
            "'order' is version 2 on node v2 and version 0 on node v1");
  EXPECT_EQ(diff("{c:custom\"lib::thing\"@2}", "{c:custom\"lib::thing\"@1}"),
            "'order.c' is custom\"lib::thing\"@2 on node v2 and "
            "custom\"lib::thing\"@1 on node v1");
}

TEST(shape, AMalformedShapeFromAPeerIsReportedNotTrusted) {
  for (std::string_view bad : {"", "{", "{a}", "{a:}", "{a:i32", "list<", "list<i32",
                               "{a:i32}}", "custom\"x", "@{a:i32}", "@x{}",
                               "@99999999999{}", "{a:i32,}", "<>", "map<i32,>"}) {
    auto text = diff("{a:i32}", bad);
    ASSERT_TRUE(text.has_value()) << bad;
    EXPECT_NE(text->find("node v1 describes type 'order' with a malformed shape"),
              std::string::npos)
      << bad << ": " << *text;
  }
}

TEST(shape, ATooDeepOrTooLongShapeIsRefused) {
  std::string deep;
  for (size_t i = 0; i <= max_shape_depth + 1; ++i)
    deep += "list<";
  deep += "i32";
  for (size_t i = 0; i <= max_shape_depth + 1; ++i)
    deep += ">";
  auto text = diff("{a:i32}", deep);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("malformed shape"), std::string::npos) << *text;
  std::string long_shape = "{" + std::string(max_shape_size, 'a') + ":i32}";
  text = diff("{a:i32}", long_shape);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("above the 65536 ferry reads"), std::string::npos)
    << *text;
}

TEST(shape, TheRegistryListsItsTypesShapesByName) {
  registry reg;
  reg.add_type<order>("z.order");
  reg.add_type<line>("a.line");
  auto shapes = reg.type_shapes();
  ASSERT_GE(shapes.size(), 2u);
  auto find = [&](const std::string& name) -> std::string {
    for (auto& x : shapes)
      if (x.name == name)
        return x.shape;
    return {};
  };
  EXPECT_EQ(find("a.line"), shape_of<line>());
  EXPECT_EQ(find("z.order"), shape_of<order>());
  EXPECT_TRUE(std::is_sorted(shapes.begin(), shapes.end(),
                             [](auto& x, auto& y) { return x.name < y.name; }));
}

} // namespace
} // namespace ferry::serializers
