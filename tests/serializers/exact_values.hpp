// Values for the exactness tests (property_test.cpp, interop_test.cpp): a
// seeded generator of nested aggregates, containers and edge values, shaped
// by what a family carries (test_types.hpp's family tags), and a comparison
// that holds floating point to its bits.
#pragma once

#include "test_types.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ferry::serializers::test {

/// One member of every number type.
struct numbers {
  bool flag = false;
  int8_t i8 = 0;
  uint8_t u8 = 0;
  int16_t i16 = 0;
  uint16_t u16 = 0;
  int32_t i32 = 0;
  uint32_t u32 = 0;
  int64_t i64 = 0;
  uint64_t u64 = 0;
  float f = 0;
  double d = 0;
};

/// A small aggregate inside the next.
struct twin {
  float f = 0;
  int16_t i = 0;
};

/// An aggregate inside a container of the outer one.
struct leaf {
  std::string text;
  std::vector<double> doubles;
  std::vector<float> floats;
  twin pair;
  std::array<double, 2> fixed{};
};

/// The property test's value for the structured families: nested
/// aggregates, sequences, maps, sets, a pair.
struct nested {
  numbers head;
  std::string name;
  std::vector<leaf> leaves;
  std::map<std::string, double> by_name;
  std::map<int64_t, std::vector<int32_t>> by_id;
  std::set<uint16_t> ids;
  std::unordered_map<int32_t, std::string> hashed;
  std::vector<std::vector<uint8_t>> blobs;
  std::vector<bool> bits;
  std::pair<int32_t, std::string> tagged;
};

/// The property test's value for raw: plain data, every byte pattern valid.
struct plain {
  int8_t i8 = 0;
  uint16_t u16 = 0;
  int32_t i32 = 0;
  uint64_t u64 = 0;
  float f = 0;
  double d = 0;
  std::array<double, 3> ds{};
  std::array<float, 3> fs{};
  std::array<uint8_t, 5> bytes{};
};

// -- comparison, floating point by its bits -----------------------------------

template <class T>
bool same(const T& a, const T& b, std::string* where = nullptr);

namespace detail_same {

template <class T>
struct is_pair : std::false_type {};

template <class A, class B>
struct is_pair<std::pair<A, B>> : std::true_type {};

inline bool note(std::string* where, const std::string& what) {
  if (where != nullptr)
    *where = what + (where->empty() ? "" : " > " + *where);
  return false;
}

template <class T>
bool elements(const T& a, const T& b, std::string* where) {
  if (a.size() != b.size())
    return note(where, "size " + std::to_string(a.size()) + " vs "
                         + std::to_string(b.size()));
  auto i = b.begin();
  size_t index = 0;
  for (auto& x : a) {
    if (!same(x, *i++, where))
      return note(where, "[" + std::to_string(index) + "]");
    ++index;
  }
  return true;
}

} // namespace detail_same

/// Returns whether `a` and `b` are equal, floating point compared by its
/// bits; on a difference `where` (if given) receives the path to it.
template <class T>
bool same(const T& a, const T& b, std::string* where) {
  using namespace detail_same;
  if constexpr (std::is_floating_point_v<T>) {
    using bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    if (std::bit_cast<bits>(a) == std::bit_cast<bits>(b))
      return true;
    return note(where, "bits " + std::to_string(std::bit_cast<bits>(a))
                         + " vs " + std::to_string(std::bit_cast<bits>(b)));
  } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>
                       || std::is_same_v<T, std::string>
                       || std::is_same_v<T, std::vector<bool>>) {
    return a == b || note(where, "values differ");
  } else if constexpr (is_pair<T>::value) {
    if (!same(a.first, b.first, where))
      return note(where, ".first");
    return same(a.second, b.second, where) || note(where, ".second");
  } else if constexpr (detail::is_instance_v<T, std::unordered_map>) {
    if (a.size() != b.size())
      return note(where, "size differs");
    for (auto& [k, v] : a) {
      auto i = b.find(k);
      if (i == b.end())
        return note(where, "a key is missing");
      if (!same(v, i->second, where))
        return note(where, "[key]");
    }
    return true;
  } else if constexpr (requires { a.begin(); a.size(); }) {
    return elements(a, b, where);
  } else {
    static_assert(is_reflectable_v<T>, "same: no comparison for this type");
    return visit_fields(a, [&](const auto&... xs) {
      return visit_fields(b, [&](const auto&... ys) {
        size_t index = 0;
        auto one = [&](const auto& x, const auto& y) {
          if (same(x, y, where)) {
            ++index;
            return true;
          }
          return note(where, "member #" + std::to_string(index));
        };
        return (one(xs, ys) && ...);
      });
    });
  }
}

// -- the generator ------------------------------------------------------------

/// Draws values of `nested` or `plain` that family `F` carries exactly:
/// edge numbers (-0.0, NaN payloads, subnormals, infinities, extreme
/// integers) often, strings of every length up to hundreds of KiB, valid but
/// unusual UTF-8 (BOM, noncharacters, the last code point, combining marks,
/// escapes), or arbitrary bytes where the family takes them.
template <class F>
class value_gen {
public:
  explicit value_gen(uint64_t seed) : rng_(seed) {
  }

  /// Returns a uniformly drawn number in [0, n).
  uint64_t below(uint64_t n) {
    return n == 0 ? 0 : rng_() % n;
  }

  bool chance(uint64_t one_in) {
    return below(one_in) == 0;
  }

  template <class I>
  I integer() {
    constexpr std::array<int64_t, 5> small{0, 1, -1, 2, 127};
    switch (below(8)) {
      case 0:
        return std::numeric_limits<I>::min();
      case 1:
        return std::numeric_limits<I>::max();
      case 2:
        return static_cast<I>(small[below(small.size())]);
      default:
        return static_cast<I>(rng_());
    }
  }

  double real() {
    for (;;) {
      auto x = draw_double();
      if (carries(x))
        return x;
    }
  }

  float real32() {
    for (;;) {
      auto x = draw_float();
      if (carries(x))
        return x;
    }
  }

  std::string text() {
    auto n = length();
    return text(n);
  }

  std::string text(size_t n) {
    std::string result;
    result.reserve(n + 4);
    while (result.size() < n) {
      if constexpr (F::text_only) {
        auto piece = text_pieces[below(text_pieces.size())];
        if (piece == std::string_view{"\0", 1} && !F::nul_in_strings)
          continue;
        result += piece;
      } else {
        result += static_cast<char>(rng_());
      }
    }
    return result;
  }

  /// A string's length: mostly short, at times empty, rarely KiBs.
  size_t length() {
    switch (below(50)) {
      case 0:
        return chance(4) ? 257 + below(2048) : 17 + below(240);
      case 1:
      case 2:
      case 3:
        return 17 + below(240);
      default:
        return chance(3) ? 0 : 1 + below(16);
    }
  }

  /// A container's size: mostly none or one or two, rarely hundreds.
  size_t count() {
    switch (below(20)) {
      case 0:
        return chance(50) ? 17 + below(300) : 3 + below(14);
      case 1:
      case 2:
      case 3:
      case 4:
      case 5:
      case 6:
      case 7:
        return 1 + below(2);
      default:
        return 0;
    }
  }

  numbers scalars() {
    numbers x;
    x.flag = chance(2);
    x.i8 = integer<int8_t>();
    x.u8 = integer<uint8_t>();
    x.i16 = integer<int16_t>();
    x.u16 = integer<uint16_t>();
    x.i32 = integer<int32_t>();
    x.u32 = integer<uint32_t>();
    x.i64 = integer<int64_t>();
    x.u64 = integer<uint64_t>();
    x.f = real32();
    x.d = real();
    return x;
  }

  leaf make_leaf() {
    leaf x;
    x.text = text();
    x.doubles.resize(count());
    for (auto& d : x.doubles)
      d = real();
    x.floats.resize(count());
    for (auto& f : x.floats)
      f = real32();
    x.pair = {real32(), integer<int16_t>()};
    x.fixed = {real(), real()};
    return x;
  }

  nested make_nested() {
    nested x;
    x.head = scalars();
    // Now and then a huge string, larger than the families' split size.
    x.name = chance(1000) ? text(64 * 1024 + below(64 * 1024)) : text();
    x.leaves.resize(count());
    for (auto& l : x.leaves)
      l = make_leaf();
    for (auto n = count(); n > 0; --n)
      x.by_name.emplace(text(), real());
    for (auto n = count(); n > 0; --n) {
      std::vector<int32_t> ids(count());
      for (auto& i : ids)
        i = integer<int32_t>();
      x.by_id.emplace(integer<int64_t>(), std::move(ids));
    }
    for (auto n = count(); n > 0; --n)
      x.ids.insert(integer<uint16_t>());
    for (auto n = count(); n > 0; --n)
      x.hashed.emplace(integer<int32_t>(), text());
    x.blobs.resize(count());
    for (auto& b : x.blobs) {
      b.resize(chance(10) ? length() : count());
      for (auto& byte : b)
        byte = static_cast<uint8_t>(rng_());
    }
    x.bits.resize(chance(4) ? below(70) : count());
    for (size_t i = 0; i < x.bits.size(); ++i)
      x.bits[i] = chance(2);
    x.tagged = {integer<int32_t>(), text()};
    return x;
  }

  plain make_plain() {
    plain x;
    x.i8 = integer<int8_t>();
    x.u16 = integer<uint16_t>();
    x.i32 = integer<int32_t>();
    x.u64 = integer<uint64_t>();
    x.f = real32();
    x.d = real();
    for (auto& d : x.ds)
      d = real();
    for (auto& f : x.fs)
      f = real32();
    for (auto& b : x.bytes)
      b = static_cast<uint8_t>(rng_());
    return x;
  }

  std::vector<plain> make_plains() {
    std::vector<plain> result(count());
    for (auto& x : result)
      x = make_plain();
    return result;
  }

  /// Whether `F` carries `x` exactly (test_types.hpp's family tags).
  template <class T>
  static bool carries(T x) {
    if (std::isnan(x)) {
      if (!F::nonfinite)
        return false;
      auto canonical = std::numeric_limits<T>::quiet_NaN();
      return F::nan_payloads || same(x, canonical);
    }
    if (std::isinf(x))
      return F::nonfinite;
    if (std::fpclassify(x) == FP_SUBNORMAL)
      return F::subnormals;
    if (x == 0 && std::signbit(x))
      return F::negative_zero;
    return true;
  }

private:
  static constexpr std::array<std::string_view, 22> text_pieces{
    "a", "Z", " ", "0", "\"", "\\", "/", "\n", "\t", "\x01", "\x7f",
    std::string_view{"\0", 1},
    "\xc3\xa9",         // U+00E9
    "\xcc\x81",         // U+0301 combining acute accent
    "\xe0\xa0\x80",     // U+0800, the first three-byte code point
    "\xed\x9f\xbf",     // U+D7FF, just below the surrogates
    "\xee\x80\x80",     // U+E000, private use
    "\xef\xbb\xbf",     // U+FEFF, byte order mark
    "\xef\xbf\xbf",     // U+FFFF, a noncharacter
    "\xf0\x90\x80\x80", // U+10000, the first four-byte code point
    "\xf0\x9f\x98\x80", // U+1F600
    "\xf4\x8f\xbf\xbf", // U+10FFFF, the last code point
  };

  double draw_double() {
    using lim = std::numeric_limits<double>;
    auto nan = [&](uint64_t quiet) {
      auto payload = (rng_() & ((uint64_t{1} << 51) - 1)) | 1;
      auto sign = (rng_() & 1) << 63;
      return std::bit_cast<double>(sign | (uint64_t{0x7ff} << 52)
                                   | (quiet << 51) | payload);
    };
    switch (below(24)) {
      case 0:
        return -0.0;
      case 1:
        return 0.0;
      case 2:
        return nan(1);
      case 3:
        return nan(0); // signalling
      case 4:
        return lim::quiet_NaN();
      case 5:
        return chance(2) ? lim::infinity() : -lim::infinity();
      case 6:
        return lim::denorm_min();
      case 7:
        return std::bit_cast<double>(rng_() & ((uint64_t{1} << 52) - 1));
      case 8:
        return lim::min();
      case 9:
        return chance(2) ? lim::max() : lim::lowest();
      case 10:
        return 9007199254740992.0; // 2^53
      case 11:
        return 9007199254740994.0;
      case 12:
        return 0.1;
      case 13:
        return static_cast<double>(static_cast<int64_t>(rng_() >> 20));
      case 14:
        return std::ldexp(1.0, static_cast<int>(below(2046)) - 1022);
      default:
        return std::bit_cast<double>(rng_());
    }
  }

  float draw_float() {
    using lim = std::numeric_limits<float>;
    auto nan = [&](uint32_t quiet) {
      auto payload = (static_cast<uint32_t>(rng_()) & 0x3fffffu) | 1;
      auto sign = static_cast<uint32_t>(rng_() & 1) << 31;
      return std::bit_cast<float>(sign | (0xffu << 23) | (quiet << 22)
                                  | payload);
    };
    switch (below(20)) {
      case 0:
        return -0.0f;
      case 1:
        return nan(1);
      case 2:
        return nan(0);
      case 3:
        return lim::quiet_NaN();
      case 4:
        return chance(2) ? lim::infinity() : -lim::infinity();
      case 5:
        return lim::denorm_min();
      case 6:
        return std::bit_cast<float>(static_cast<uint32_t>(rng_()) & 0x7fffffu);
      case 7:
        return chance(2) ? lim::max() : lim::lowest();
      case 8:
        return 16777216.0f; // 2^24
      case 9:
        return static_cast<float>(static_cast<int32_t>(rng_() >> 40));
      default:
        return std::bit_cast<float>(static_cast<uint32_t>(rng_()));
    }
  }

  std::mt19937_64 rng_;
};

} // namespace ferry::serializers::test
