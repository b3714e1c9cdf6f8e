// What the built-in families check so that a value comes back exactly or not
// at all. Not API.
//
// - Text: `utf8_error` finds the first byte of a string that is not
//   well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
//   above U+10FFFF); `check_text` throws `decode_fault{invalid_text}` for
//   such a string, or for a NUL character where the family cannot carry one.
// - Numbers: conversions that either keep the value bit for bit or say that
//   they cannot (`exact_float_of`, `exact_narrow`, `exact_widen`): an integer
//   into a floating-point member, a double into a float, a float's bits into
//   a double (NaN payloads included, which the hardware conversions quiet).
// - Keys: `insert_unique` inserts into a map or set and throws
//   `decode_fault{duplicate_key}` when the key was there already.
// - Members: `note_member` appends where in an aggregate a fault happened to
//   its text, innermost member first.
//
// Thread-safety: pure functions.
#pragma once

#include "ferry/serializers/detail/error.hpp"

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>

namespace ferry::serializers::detail {

/// Returns the offset of the first byte of `text` that does not belong to
/// well-formed UTF-8, or `std::string_view::npos` when all do.
[[nodiscard]] size_t utf8_error(std::string_view text) noexcept;

/// Throws `decode_fault{errc::invalid_text}` for `text`, whose byte `bad` is
/// not UTF-8 text (or is a NUL character, when `nul` is set); `where` says
/// where that byte is, `family` who refuses it, `fix` what to do instead.
[[noreturn]] void refuse_text(std::string_view text, size_t bad, bool nul,
                              const std::string& where, const char* family,
                              std::string_view fix);

/// Throws `decode_fault{errc::invalid_text}` unless `text` is well-formed
/// UTF-8 (and holds no NUL character unless `nul_ok`); `where(i)` returns
/// where byte `i` of `text` is, for the message (see `refuse_text`).
template <class Where>
void check_text(std::string_view text, bool nul_ok, const char* family,
                std::string_view fix, Where&& where) {
  if (auto bad = utf8_error(text); bad != std::string_view::npos)
    refuse_text(text, bad, false, where(bad), family, fix);
  if (!nul_ok)
    if (auto nul = text.find('\0'); nul != std::string_view::npos)
      refuse_text(text, nul, true, where(nul), family, fix);
}

/// `where` for `check_text` when the text's place is unknown (encoding).
inline std::string byte_of_string(size_t i) {
  return "at byte " + std::to_string(i) + " of the string";
}

/// Returns the floating-point number `F` equal to the integer `x`, or nothing
/// when `F` cannot hold `x` exactly.
template <class F, class I>
[[nodiscard]] std::optional<F> exact_float_of(I x) noexcept {
  static_assert(std::is_floating_point_v<F> && std::is_integral_v<I>);
  auto f = static_cast<F>(x);
  // The conversion rounds; converting back must give `x`. Beyond the
  // integer's range the round trip would be undefined: check first.
  if constexpr (std::is_signed_v<I>) {
    if (f >= F(0x1p63) || f < F(-0x1p63))
      return std::nullopt;
    return static_cast<int64_t>(f) == static_cast<int64_t>(x)
             ? std::optional<F>{f}
             : std::nullopt;
  } else {
    if (f >= F(0x1p64))
      return std::nullopt;
    return static_cast<uint64_t>(f) == static_cast<uint64_t>(x)
             ? std::optional<F>{f}
             : std::nullopt;
  }
}

/// Returns the double whose bits say what the float `x` says: its value, or
/// for a NaN its sign and payload (shifted into the double's mantissa, the
/// quiet bit kept as it is, where the hardware would set it).
[[nodiscard]] inline double exact_widen(float x) noexcept {
  if (!std::isnan(x))
    return static_cast<double>(x);
  auto b = std::bit_cast<uint32_t>(x);
  uint64_t sign = b >> 31;
  uint64_t payload = b & 0x7fffffu;
  return std::bit_cast<double>((sign << 63) | (uint64_t{0x7ff} << 52) |
                               (payload << 29));
}

/// Returns the float equal to `x`, or nothing when no float is: a finite
/// value that rounds, one beyond float's range, or a NaN whose payload has
/// bits below float's (the inverse of `exact_widen` for NaNs).
[[nodiscard]] inline std::optional<float> exact_narrow(double x) noexcept {
  if (std::isnan(x)) {
    auto b = std::bit_cast<uint64_t>(x);
    if ((b & ((uint64_t{1} << 29) - 1)) != 0)
      return std::nullopt;
    auto sign = static_cast<uint32_t>(b >> 63);
    auto payload = static_cast<uint32_t>((b >> 29) & 0x7fffffu);
    return std::bit_cast<float>((sign << 31) | (0xffu << 23) | payload);
  }
  if (std::isfinite(x) && std::fabs(x) > 0x1.fffffep127)
    return std::nullopt; // beyond float's range: the cast is undefined
  auto f = static_cast<float>(x);
  if (static_cast<double>(f) != x)
    return std::nullopt;
  return f;
}

/// Returns the text of a refusal of a number `what` that the member's type
/// `type` cannot hold exactly.
[[nodiscard]] std::string inexact_text(const std::string& what,
                                       const char* type);

/// Inserts `value` into the map or set `xs` (any standard associative
/// container with unique keys); throws `decode_fault{duplicate_key}` when
/// `xs` holds its key already. `index` is the element's position in the
/// input, `what` names the container.
template <class C, class V>
void insert_unique(C& xs, V&& value, size_t index, const char* what) {
  auto before = xs.size();
  xs.insert(std::forward<V>(value));
  if (xs.size() == before)
    throw decode_fault{errc::duplicate_key,
                       std::string{what} + " holds a key twice (element " +
                         std::to_string(index) +
                         " repeats an earlier key); its encoder writes each "
                         "key once, so the input is corrupt or hostile"};
}

/// Appends to `text` where a fault happened: member `index` (of type
/// `member`) of the aggregate `owner`. Called innermost first, so the text
/// ends with the path from the innermost member outwards.
void note_member(std::string& text, const std::type_info& owner, size_t index,
                 const std::type_info& member);

/// Runs `f`, which reads or writes member `index` (of type `Member`) of an
/// `Owner`; a `decode_fault` leaving it gets the member appended.
template <class Owner, class Member, class F>
void in_member(size_t index, F&& f) {
  try {
    f();
  } catch (decode_fault& e) {
    note_member(e.what, typeid(Owner), index, typeid(Member));
    throw;
  }
}

} // namespace ferry::serializers::detail
