// inspect_serializability, trace output, error rendering.

#include "test_types.hpp"

#include <cstdlib>

namespace ferry::serializers::test {
namespace {

struct mixed {
  int32_t id = 0;
  std::variant<int32_t, std::string> choice;
  std::shared_ptr<node> ref;
  std::optional<double> maybe;
};

TEST(diagnostics, ReportNamesWhichMemberBlocksWhichFamily) {
  auto sut = inspect_serializability<mixed>();
  ASSERT_EQ(sut.members.size(), 4u);
  EXPECT_TRUE(sut.members[0].blocked.empty()); // an int32_t goes anywhere
  auto blocks = [&](size_t member, const std::string& family) {
    for (auto& [f, why] : sut.members[member].blocked)
      if (f == family)
        return true;
    return false;
  };
  EXPECT_TRUE(blocks(1, "msgpack"));
  EXPECT_TRUE(blocks(1, "caf"));
  EXPECT_FALSE(blocks(1, "cereal.binary"));
  EXPECT_TRUE(blocks(2, "msgpack"));
  EXPECT_TRUE(blocks(2, "caf"));
  EXPECT_FALSE(blocks(2, "cereal.json"));
  EXPECT_TRUE(blocks(3, "caf"));
  EXPECT_FALSE(blocks(3, "msgpack"));
  EXPECT_EQ(sut.encodable_by, (std::vector<std::string>{
                                "cereal.binary", "cereal.portable",
                                "cereal.json"}));
  auto text = sut.to_string();
  EXPECT_NE(text.find("member #2"), std::string::npos);
  EXPECT_NE(text.find("shared identity"), std::string::npos);
}

/// A string of another character type: cereal's binary archives write it,
/// its JSON archives do not compile for it.
struct wide_label {
  int32_t id = 0;
  std::u16string label;
  friend bool operator==(const wide_label&, const wide_label&) = default;
};

TEST(diagnostics, CerealJsonRefusesStringsOtherThanStdString) {
  // Arrange
  registry sut;
  wide_label in{7, u"seven"};
  // Act
  auto report = inspect_serializability<wide_label>();
  auto json = sut.encode(in, encode_with("cereal.json"));
  auto binary = sut.encode(in, encode_with("cereal.binary"));
  // Assert: cereal.json is blocked by the member and says so; the binary
  // format carries the value.
  ASSERT_EQ(report.members.size(), 2u);
  std::string why;
  for (auto& [family, reason] : report.members[1].blocked)
    if (family == "cereal.json")
      why = reason;
  EXPECT_NE(why.find("cereal.json has no support for"), std::string::npos)
    << why;
  ASSERT_FALSE(json);
  EXPECT_EQ(json.error(), errc::no_family_can_encode);
  EXPECT_NE(render(json.error()).find("cereal.json"), std::string::npos)
    << render(json.error());
  ASSERT_TRUE(binary) << render(binary.error());
  auto out = sut.decode<wide_label>(*binary, decode_with("cereal.binary"));
  ASSERT_TRUE(out) << render(out.error());
  EXPECT_EQ(*out, in);
}

struct with_pointer_deep {
  std::vector<point> ok;
  std::optional<int> fine;
};

TEST(diagnostics, SerializableTypeHasNoBlockedStructuredFamily) {
  auto sut = inspect_serializability<with_pointer_deep>();
  EXPECT_TRUE(sut.serializable());
  EXPECT_EQ(sut.blocked.size(), 2u); // caf (optional) and raw
}

TEST(diagnostics, UnserializableLeafNamesTheFix) {
  auto sut = inspect_serializability<legacy_id>();
  EXPECT_FALSE(sut.serializable());
  ASSERT_FALSE(sut.blocked.empty());
  EXPECT_NE(sut.blocked[0].second.find("register_serializer"),
            std::string::npos);
}

TEST(diagnostics, TraceListsEachMemberSoTheFailingOneIsLast) {
  // Arrange
  registry sut;
  std::vector<std::string> lines;
  sut.trace_sink([&](std::string_view line) { lines.emplace_back(line); });
  sut.trace(true);
  // Act
  auto p = sut.encode(shape{"s", {{1, 2, "a"}}, {}}, encode_with("cereal.binary"));
  // Assert
  ASSERT_TRUE(p);
  auto members = std::count_if(lines.begin(), lines.end(), [](auto& l) {
    return l.find("member #") != std::string::npos;
  });
  EXPECT_EQ(members, 3 + 3); // shape's three members, then the point's three
  EXPECT_NE(lines.front().find("trying family cereal.binary"),
            std::string::npos);
}

TEST(diagnostics, TraceIsOffByDefaultAndOnPerCall) {
  registry sut;
  std::vector<std::string> lines;
  sut.trace_sink([&](std::string_view line) { lines.emplace_back(line); });
  (void) sut.encode(point{}, encode_with("msgpack"));
  auto quiet = lines.size();
  auto opts = encode_with("msgpack");
  opts.trace = true;
  (void) sut.encode(point{}, opts);
  EXPECT_EQ(quiet, 0u);
  EXPECT_GT(lines.size(), 3u);
}

TEST(diagnostics, EnvironmentVariableTurnsTracingOn) {
  ::setenv("FERRY_SERIALIZERS_TRACE", "1", 1);
  registry on;
  ::setenv("FERRY_SERIALIZERS_TRACE", "0", 1);
  registry off;
  ::unsetenv("FERRY_SERIALIZERS_TRACE");
  EXPECT_TRUE(on.trace());
  EXPECT_FALSE(off.trace());
}

TEST(diagnostics, RenderOfNoErrorSaysNone) {
  EXPECT_EQ(render(caf::error{}), "none");
}

TEST(diagnostics, RenderShowsCategoryCodeAndContext) {
  auto err = caf::make_error(errc::truncated_frame, std::string{"frame 0"});
  EXPECT_EQ(render(err), "ferry_ser: truncated_frame: frame 0");
  EXPECT_EQ(to_string(errc::stand_in_mismatch), "stand_in_mismatch");
  EXPECT_EQ(to_string(errc::family_unavailable), "family_unavailable");
}

} // namespace
} // namespace ferry::serializers::test
