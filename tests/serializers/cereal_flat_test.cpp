// The flat path of the binary cereal families (detail/cereal_flat.hpp,
// `cereal_flat`): numbers and arrays of numbers are written and read without
// a cereal archive. These tests hold it to the archive's behaviour: the same
// bytes as plain cereal on the way out, and on the way in the same value or
// the same error as ferry's bounds-checked archive, for canonical input,
// damaged input and random bytes alike.

#include "test_types.hpp"

#include "ferry/serializers/families/cereal.hpp"

#include <cereal/archives/binary.hpp>
#include <cereal/archives/portable_binary.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <variant>

namespace ferry::serializers::test {
namespace {

template <bool Portable, class T>
std::vector<std::byte> plain_cereal_bytes(const T& x) {
  std::ostringstream os;
  {
    if constexpr (Portable) {
      cereal::PortableBinaryOutputArchive ar{os};
      ar(x);
    } else {
      cereal::BinaryOutputArchive ar{os};
      ar(x);
    }
  }
  auto s = os.str();
  auto p = reinterpret_cast<const std::byte*>(s.data());
  return {p, p + s.size()};
}

/// What ferry's bounds-checked archive alone makes of `in`: the value, or the
/// error code of its fault.
template <bool Portable, class T>
std::variant<T, errc> archive_result(std::span<const std::byte> in,
                                     uint32_t max_depth) {
  try {
    detail::checked_input_archive<Portable> ar{in, max_depth};
    T out{};
    ar(out);
    if (ar.remaining() != 0)
      return errc::trailing_bytes;
    return out;
  } catch (const detail::decode_fault& fault) {
    return fault.code;
  }
}

template <class T>
bool same_value(const T& x, const T& y) {
  if constexpr (std::is_floating_point_v<T>)
    return std::memcmp(&x, &y, sizeof(T)) == 0; // NaN and -0.0 too
  else
    return x == y;
}

template <class T>
struct flat : ::testing::Test {};

using flat_types
  = ::testing::Types<uint8_t, int16_t, uint32_t, int64_t, float, double,
                     std::vector<std::byte>, std::vector<int32_t>,
                     std::vector<double>, std::vector<uint16_t>, std::string>;
TYPED_TEST_SUITE(flat, flat_types);

template <class T>
std::vector<T> samples() {
  if constexpr (std::is_arithmetic_v<T>) {
    return {T{0}, std::numeric_limits<T>::max(), std::numeric_limits<T>::min(),
            static_cast<T>(-1), std::numeric_limits<T>::lowest()};
  } else {
    using E = typename T::value_type;
    T one;
    one.push_back(static_cast<E>(7));
    T many;
    for (int i = 0; i < 300; ++i)
      many.push_back(static_cast<E>(i * 37 + 1));
    return {T{}, one, many};
  }
}

/// Compares what the registry decodes from `bytes` with what the archive
/// alone makes of them, for every max_depth from 0 to 4.
template <bool Portable, class T>
void expect_like_the_archive(registry& sut, const std::string& family,
                             const std::string& type_name,
                             const std::vector<std::byte>& bytes,
                             const std::string& what) {
  for (uint32_t depth = 0; depth <= 4; ++depth) {
    auto opts = decode_with(family);
    opts.limits.max_depth = depth;
    auto got = sut.decode<T>(make_payload(family, type_name, bytes), opts);
    auto want = archive_result<Portable, T>(bytes, depth);
    if (auto* value = std::get_if<T>(&want)) {
      ASSERT_TRUE(got) << what << ", max_depth " << depth << ": "
                       << render(got.error());
      EXPECT_TRUE(same_value(*got, *value)) << what << ", max_depth " << depth;
    } else {
      ASSERT_FALSE(got) << what << ", max_depth " << depth
                        << ": decoded, the archive refuses it";
      EXPECT_EQ(got.error(), std::get<errc>(want))
        << what << ", max_depth " << depth << ": " << render(got.error());
    }
  }
}

TYPED_TEST(flat, WritesWhatPlainCerealWrites) {
  static_assert(detail::cereal_flat<detail::cereal_format::binary, TypeParam>);
  registry sut;
  for (auto& x : samples<TypeParam>()) {
    auto b = sut.encode(x, encode_with("cereal.binary"));
    auto p = sut.encode(x, encode_with("cereal.portable"));
    ASSERT_TRUE(b && p);
    ASSERT_EQ(b->frames.size(), 1u);
    ASSERT_EQ(p->frames.size(), 1u);
    auto bb = b->frames[0].bytes();
    auto pb = p->frames[0].bytes();
    EXPECT_EQ(std::vector<std::byte>(bb.begin(), bb.end()),
              plain_cereal_bytes<false>(x));
    EXPECT_EQ(std::vector<std::byte>(pb.begin(), pb.end()),
              plain_cereal_bytes<true>(x));
  }
}

TYPED_TEST(flat, ReadsLikeTheArchive) {
  // Arrange: canonical bytes of each sample, then each damaged: cut short by
  // one byte, one byte more, the size tag one more or one less, the portable
  // endianness byte set to big-endian (the archive swaps) or to 2.
  registry sut;
  auto type_name = sut.encode(TypeParam{}, encode_with("cereal.binary"))
                     ->header.type_name;
  auto check = [&]<bool Portable>(const std::vector<std::byte>& good) {
    std::string family = Portable ? "cereal.portable" : "cereal.binary";
    size_t flag = Portable ? 1 : 0;
    std::vector<std::pair<std::string, std::vector<std::byte>>> inputs;
    inputs.emplace_back("canonical", good);
    inputs.emplace_back("cut short", std::vector<std::byte>(good.begin(),
                                                            good.end() - 1));
    auto longer = good;
    longer.push_back(std::byte{0x5a});
    inputs.emplace_back("one byte more", longer);
    if constexpr (!std::is_arithmetic_v<TypeParam>) {
      for (int delta : {1, -1}) {
        auto tagged = good;
        uint64_t n = 0;
        std::memcpy(&n, tagged.data() + flag, sizeof(n));
        n += static_cast<uint64_t>(delta);
        std::memcpy(tagged.data() + flag, &n, sizeof(n));
        inputs.emplace_back("size tag " + std::to_string(delta), tagged);
      }
    }
    if constexpr (Portable) {
      for (auto b : {std::byte{0}, std::byte{2}}) {
        auto other = good;
        other[0] = b;
        inputs.emplace_back("endianness byte "
                              + std::to_string(static_cast<int>(b)),
                            other);
      }
    }
    for (auto& [what, bytes] : inputs)
      expect_like_the_archive<Portable, TypeParam>(sut, family, type_name,
                                                   bytes, family + ", " + what);
  };
  for (auto& x : samples<TypeParam>()) {
    check.template operator()<false>(plain_cereal_bytes<false>(x));
    check.template operator()<true>(plain_cereal_bytes<true>(x));
  }
}

TYPED_TEST(flat, RandomBytesReadLikeTheArchive) {
  // Random inputs of 0 to 40 bytes, most of them with a plausible size tag
  // (a small number in the first eight bytes) so that some decode.
  registry sut;
  auto type_name = sut.encode(TypeParam{}, encode_with("cereal.binary"))
                     ->header.type_name;
  std::mt19937_64 rng{20261123};
  for (int i = 0; i < 400; ++i) {
    std::vector<std::byte> bytes(rng() % 41);
    for (auto& b : bytes)
      b = static_cast<std::byte>(rng());
    bool portable = i % 2 == 1;
    size_t flag = portable ? 1 : 0;
    if (portable && !bytes.empty() && i % 4 != 1)
      bytes[0] = std::byte{1};
    if (bytes.size() >= flag + 8 && i % 3 != 0) {
      uint64_t n = rng() % 6;
      std::memcpy(bytes.data() + flag, &n, sizeof(n));
    }
    auto what = "random input " + std::to_string(i);
    if (portable)
      expect_like_the_archive<true, TypeParam>(sut, "cereal.portable",
                                               type_name, bytes, what);
    else
      expect_like_the_archive<false, TypeParam>(sut, "cereal.binary",
                                                type_name, bytes, what);
  }
}

TEST(flat, BoolsAndAggregatesStillGoThroughTheArchive) {
  // bool has invalid byte patterns (the archive refuses 2); records hold
  // strings and maps: neither is flat.
  static_assert(!detail::cereal_flat<detail::cereal_format::binary, bool>);
  static_assert(!detail::cereal_flat<detail::cereal_format::binary, record>);
  static_assert(
    !detail::cereal_flat<detail::cereal_format::json, std::vector<double>>);
  registry sut;
  auto x = sut.decode<bool>(
    make_payload("cereal.binary",
                 sut.encode(true, encode_with("cereal.binary"))
                   ->header.type_name,
                 bytes_of({2})),
    decode_with("cereal.binary"));
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::malformed_frame);
}

} // namespace
} // namespace ferry::serializers::test
