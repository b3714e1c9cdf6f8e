// One round-trip suite over every family (cereal's testing style): the same
// values go through each family; where a family cannot express a value, the
// test checks that it refuses it with a typed error instead.

#include "test_types.hpp"

#include <limits>
#include <unordered_map>

namespace ferry::serializers::test {
namespace {

template <class Family>
class roundtrip : public ::testing::Test {
protected:
  registry sut;

  /// Encodes `x`, sends the payload over the wire, decodes it and expects
  /// `x` back; also decodes straight from the encoder's frames.
  template <class T>
  void expect_roundtrip(const T& x) {
    auto p = sut.encode(x, encode_with(Family::name));
    ASSERT_TRUE(p) << render(p.error());
    EXPECT_EQ(p->header.family, Family::name);
    auto direct = sut.decode<T>(*p, decode_with(Family::name));
    ASSERT_TRUE(direct) << render(direct.error());
    EXPECT_TRUE(*direct == x);
    auto wire = over_the_wire(*p);
    ASSERT_TRUE(wire) << render(wire.error());
    auto y = sut.decode<T>(*wire, decode_with(Family::name));
    ASSERT_TRUE(y) << render(y.error());
    EXPECT_TRUE(*y == x);
  }

  /// Expects the family to refuse `x` with a typed error naming it.
  template <class T>
  void expect_refused(const T& x) {
    auto p = sut.encode(x, encode_with(Family::name));
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), errc::no_family_can_encode);
    EXPECT_NE(render(p.error()).find(Family::name), std::string::npos);
  }

  template <class T>
  void expect(bool supported, const T& x) {
    if (supported)
      expect_roundtrip(x);
    else
      expect_refused(x);
  }
};

TYPED_TEST_SUITE(roundtrip, all_families);

TYPED_TEST(roundtrip, ScalarsSurviveIncludingExtremes) {
  this->expect(true, int32_t{-42});
  this->expect(true, std::numeric_limits<int64_t>::min());
  this->expect(true, std::numeric_limits<int64_t>::max());
  this->expect(true, std::numeric_limits<uint64_t>::max());
  this->expect(true, uint8_t{255});
  this->expect(true, 3.141592653589793);
  this->expect(true, std::numeric_limits<double>::max());
  this->expect(true, -0.5f);
}

TYPED_TEST(roundtrip, SubnormalsSurviveOrAreRefused) {
  // CAF 0.17 corrupts subnormals; ferry's caf family refuses them.
  this->expect(TypeParam::subnormals, std::numeric_limits<double>::denorm_min());
  this->expect(TypeParam::subnormals, std::numeric_limits<float>::denorm_min());
}

TYPED_TEST(roundtrip, StringsWithNulSurviveOrAreRefused) {
  // cereal's JSON reader cuts strings at NUL; ferry's cereal.json refuses them.
  this->expect(TypeParam::nul_in_strings, std::string{"a\0b", 3});
}

TYPED_TEST(roundtrip, StringsSurviveWithEscapesAndUtf8) {
  this->expect(true, std::string{"hello"});
  this->expect(true, std::string{"q\"b\\s\n\t"});
  this->expect(true, std::string{"gr\xc3\xbc\xc3\x9f dich \xe2\x82\xac"});
  this->expect(true, std::string(100000, 'x'));
}

TYPED_TEST(roundtrip, NestedContainersSurvive) {
  constexpr bool ok = TypeParam::structured;
  this->expect(ok, std::vector<std::vector<int32_t>>{{1, 2}, {}, {3}});
  this->expect(ok, std::map<std::string, std::vector<double>>{
                     {"a", {1.5, 2.5}}, {"b", {}}});
  this->expect(ok, std::vector<std::string>{"x", "", "yz"});
}

TYPED_TEST(roundtrip, OptionalSurvivesWhereExpressible) {
  constexpr bool ok = TypeParam::optionals;
  this->expect(ok, std::optional<int32_t>{7});
  this->expect(ok, std::optional<std::string>{});
}

TYPED_TEST(roundtrip, VariantSurvivesWhereExpressible) {
  constexpr bool ok = TypeParam::variants;
  using v = std::variant<int32_t, std::string>;
  this->expect(ok, v{int32_t{5}});
  this->expect(ok, v{std::string{"five"}});
}

TYPED_TEST(roundtrip, MapsSurvive) {
  constexpr bool ok = TypeParam::structured;
  this->expect(ok, std::map<int32_t, std::string>{{1, "one"}, {-2, "minus"}});
  this->expect(ok, std::unordered_map<std::string, int64_t>{{"k", 1}, {"l", 2}});
}

TYPED_TEST(roundtrip, AggregatesSurviveFieldByField) {
  constexpr bool ok = TypeParam::structured;
  this->expect(ok, point{1, 2.5, "p"});
  this->expect(ok, shape{"tri", {{0, 0, "a"}, {1, 0, "b"}, {0, 1, "c"}},
                         {{"color", 3}}});
  this->expect(ok, record{7, "r", std::vector<float>(256, 0.5f),
                          {{"a", 1}, {"b", 2}}});
  // Plain data: raw carries it too.
  this->expect(true, sample{9, 0.25, {1, 2, 3, 4}});
}

TYPED_TEST(roundtrip, TypesWithOwnSerializationSurvive) {
  this->expect(TypeParam::structured, account{"ann", 1234});
}

TYPED_TEST(roundtrip, EmptyValuesSurvive) {
  this->expect(true, std::vector<int32_t>{});
  this->expect(true, std::string{});
  this->expect(TypeParam::structured, std::map<std::string, int32_t>{});
  this->expect(TypeParam::structured, point{});
  this->expect(true, sample{});
}

TYPED_TEST(roundtrip, SharedPointerArrivesAsOneObject) {
  // Arrange
  auto a = std::make_shared<node>(node{1, {1, 2, 3}});
  auto b = std::make_shared<node>(node{2, {}});
  graph g{{a, b, a, nullptr, a}};
  auto p = this->sut.encode(g, encode_with(TypeParam::name));
  if (!TypeParam::shared_identity) {
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), errc::no_family_can_encode);
    return;
  }
  ASSERT_TRUE(p) << render(p.error());
  // Act
  auto wire = over_the_wire(*p);
  ASSERT_TRUE(wire);
  auto y = this->sut.template decode<graph>(*wire, decode_with(TypeParam::name));
  // Assert
  ASSERT_TRUE(y) << render(y.error());
  ASSERT_EQ(y->nodes.size(), 5u);
  EXPECT_EQ(y->nodes[0].get(), y->nodes[2].get());
  EXPECT_EQ(y->nodes[0].get(), y->nodes[4].get());
  EXPECT_NE(y->nodes[0].get(), y->nodes[1].get());
  EXPECT_EQ(y->nodes[3], nullptr);
  EXPECT_EQ(*y->nodes[0], *a);
  EXPECT_EQ(*y->nodes[1], *b);
}

TYPED_TEST(roundtrip, SharedObjectIsEncodedOnce) {
  if (!TypeParam::shared_identity)
    return; // refusal covered by SharedPointerArrivesAsOneObject
  auto big = std::make_shared<node>(node{1, std::vector<int32_t>(10000, 7)});
  graph once{{big}};
  graph thrice{{big, big, big}};
  auto p1 = this->sut.encode(once, encode_with(TypeParam::name));
  auto p3 = this->sut.encode(thrice, encode_with(TypeParam::name));
  ASSERT_TRUE(p1 && p3);
  // Two more references cost a few bytes each, not two more copies.
  EXPECT_LT(p3->size(), p1->size() + p1->size() / 10);
}

TYPED_TEST(roundtrip, LargeArraySurvives64MiB) {
  std::vector<double> xs(64 * 1024 * 1024 / sizeof(double));
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = static_cast<double>(i) * 0.5;
  this->expect(true, xs);
}

} // namespace
} // namespace ferry::serializers::test
