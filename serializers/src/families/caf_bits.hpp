// Bits of CAF 0.17's binary format the caf family's reader and writer
// share (families/caf.cpp, families/caf_numbers.cpp): network byte order,
// and which floating-point values CAF's IEEE 754 packing carries. Not API.
//
// Contract: CAF's packing of a value `refuse_inexact` accepts (finite and
// normal, or +0.0) is that value's own bits, and CAF's unpacking of bits
// `refuse_unwritten` accepts is the value with those bits; so the family
// writes and reads such values as their bits and never runs the packing.
//
// Thread-safety: stateless functions.
#pragma once

#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/errc.hpp"

#include <caf/error.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <sstream>
#include <string>
#include <type_traits>

namespace ferry::serializers::detail::caf_bits {

template <class T>
inline std::string to_hex(T x) {
  std::ostringstream os;
  os << std::hex << std::setw(sizeof(T) * 2) << std::setfill('0')
     << static_cast<uint64_t>(x);
  return os.str();
}

/// Returns `x` with its bytes reversed on a little-endian host (network
/// byte order either way).
template <class T>
inline T to_big_endian(T x) {
  static_assert(std::is_unsigned_v<T>);
  if constexpr (std::endian::native == std::endian::big || sizeof(T) == 1)
    return x;
  else if constexpr (sizeof(T) == 2)
    return __builtin_bswap16(x);
  else if constexpr (sizeof(T) == 4)
    return __builtin_bswap32(x);
  else
    return __builtin_bswap64(x);
}

/// Refuses what CAF 0.17's IEEE 754 packing cannot carry exactly.
template <class Float>
caf::error refuse_inexact(Float x) {
  if (!std::isfinite(x))
    return make_error(errc::inexact_value,
                      "an infinite or NaN floating-point value cannot be "
                      "sent: CAF 0.17's IEEE 754 packing loops forever on it "
                      "(found by fuzzing); use cereal.binary or msgpack for "
                      "such values");
  if (std::fpclassify(x) == FP_SUBNORMAL)
    return make_error(errc::inexact_value,
                      "a subnormal floating-point value (" +
                        std::to_string(static_cast<double>(x)) +
                        ") would arrive corrupted: CAF 0.17's IEEE 754 "
                        "packing mishandles subnormals; use cereal.binary "
                        "or msgpack for such values");
  if (x == 0 && std::signbit(x))
    return make_error(errc::inexact_value,
                      "-0.0 would arrive as 0: CAF 0.17's IEEE 754 packing "
                      "drops the sign of zero; use cereal.binary or msgpack "
                      "for such values");
  return {};
}

/// Refuses bits CAF's IEEE 754 packing never writes: a zero exponent field
/// with other bits set (CAF reads a subnormal or -2^-1023), or an exponent
/// field of all ones (CAF reads a huge number instead of infinity or NaN).
template <class Bits>
caf::error refuse_unwritten(Bits bits, int exponent_bits) {
  constexpr int width = sizeof(Bits) * 8;
  auto mantissa_bits = width - 1 - exponent_bits;
  auto exponent_mask = (Bits{1} << exponent_bits) - 1;
  auto exponent = static_cast<Bits>((bits >> mantissa_bits) & exponent_mask);
  if ((exponent == 0 && bits != 0) || exponent == exponent_mask)
    return make_error(errc::inexact_value,
                      "the floating-point bits 0x" + to_hex(bits) +
                        " are none that CAF 0.17's IEEE 754 packing writes "
                        "(a subnormal, -0.0, an infinity or a NaN); the "
                        "input is corrupt or hostile");
  return {};
}

} // namespace ferry::serializers::detail::caf_bits
