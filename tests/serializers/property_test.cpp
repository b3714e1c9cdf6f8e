// decode(encode(v)) == v, bit for bit, for 100,000 seeded random values per
// family: nested aggregates, containers and edge values (exact_values.hpp),
// each sent through the payload header's codec with its frames copied as a
// link copies them. A failure names the seed and the value's index; rerun
// one family with FERRY_PROPERTY_SEED and FERRY_PROPERTY_VALUES set to
// reproduce or to search further.

#include "exact_values.hpp"

#include <chrono>
#include <cstdlib>

namespace ferry::serializers::test {
namespace {

constexpr uint64_t default_seed = 0x5eed'f377'0001;
constexpr size_t default_values = 100'000;

uint64_t env_or(const char* name, uint64_t fallback) {
  auto text = std::getenv(name);
  return text != nullptr ? std::strtoull(text, nullptr, 0) : fallback;
}

template <class Family>
class property : public ::testing::Test {
protected:
  registry sut;

  /// Returns the family's next value: `nested`, or raw's `plain` values.
  template <class Gen>
  auto next(Gen& gen) {
    if constexpr (Family::structured)
      return gen.make_nested();
    else
      return gen.make_plains();
  }

  /// Encodes `x`, sends the payload over the wire and decodes it; returns
  /// an empty string when `x` came back bit for bit, else what went wrong.
  template <class T>
  std::string roundtrip(const T& x) {
    auto p = sut.encode(x, encode_with(Family::name));
    if (!p)
      return "encode failed: " + render(p.error());
    if (p->header.family != Family::name)
      return "encoded with " + p->header.family;
    auto wire = over_the_wire(*p);
    if (!wire)
      return "header failed: " + render(wire.error());
    auto y = sut.decode<T>(*wire, decode_with(Family::name));
    if (!y)
      return "decode failed: " + render(y.error());
    std::string where;
    if (!same(x, *y, &where))
      return "came back different at " + where;
    return {};
  }
};

TYPED_TEST_SUITE(property, all_families);

TYPED_TEST(property, DecodeOfEncodeIsTheValueBitForBit) {
  // Arrange
  auto seed = env_or("FERRY_PROPERTY_SEED", default_seed);
  auto values = env_or("FERRY_PROPERTY_VALUES", default_values);
  value_gen<TypeParam> gen{seed};
  auto start = std::chrono::steady_clock::now();
  // Act and assert
  size_t done = 0;
  for (; done < values; ++done) {
    auto x = this->next(gen);
    auto failure = this->roundtrip(x);
    if (!failure.empty()) {
      ADD_FAILURE() << TypeParam::name << ", seed " << seed << ", value #"
                    << done << ": " << failure;
      break;
    }
  }
  EXPECT_EQ(done, values);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::steady_clock::now() - start)
              .count();
  std::cout << TypeParam::name << ": " << done << " values in " << ms
            << " ms\n";
}

TYPED_TEST(property, TheGeneratorDrawsEdgeValues) {
  // The property above is only as good as its values: check that they hold
  // what the family carries of each edge case.
  value_gen<TypeParam> gen{default_seed};
  bool negative_zero = false;
  bool nan_payload = false;
  bool subnormal = false;
  bool infinity = false;
  bool huge = false;
  bool empty = false;
  bool extreme = false;
  for (size_t i = 0; i < 3000; ++i) {
    auto d = gen.real();
    negative_zero |= d == 0 && std::signbit(d);
    nan_payload |= std::isnan(d)
                   && !same(d, std::numeric_limits<double>::quiet_NaN());
    subnormal |= std::fpclassify(d) == FP_SUBNORMAL;
    infinity |= std::isinf(d);
    auto s = gen.text(gen.length());
    empty |= s.empty();
    extreme |= gen.template integer<int64_t>() == INT64_MIN;
  }
  for (size_t i = 0; i < 3000 && !huge; ++i)
    huge = gen.make_nested().name.size() >= 64 * 1024;
  EXPECT_EQ(negative_zero, TypeParam::negative_zero);
  EXPECT_EQ(nan_payload, TypeParam::nan_payloads);
  EXPECT_EQ(subnormal, TypeParam::subnormals);
  EXPECT_EQ(infinity, TypeParam::nonfinite);
  EXPECT_TRUE(huge);
  EXPECT_TRUE(empty);
  EXPECT_TRUE(extreme);
}

} // namespace
} // namespace ferry::serializers::test
