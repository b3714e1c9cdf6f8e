// Little-endian integers in byte buffers, for ferry's fixed formats (the
// payload header, the wire message head). Not API.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ferry::serializers::detail {

/// Writes the low `n` bytes of `x` (n <= 8) little-endian at `out`; returns
/// the byte after them.
/// REQUIRES: `out` has room for `n` bytes.
inline std::byte* put_le(std::byte* out, uint64_t x, size_t n) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out, &x, n);
    return out + n;
  } else {
    for (size_t i = 0; i < n; ++i)
      *out++ = static_cast<std::byte>((x >> (8 * i)) & 0xff);
    return out;
  }
}

/// Reads `n` bytes (n <= 8) at `in` as a little-endian integer.
/// REQUIRES: `in` holds `n` bytes.
inline uint64_t get_le(const std::byte* in, size_t n) noexcept {
  uint64_t x = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&x, in, n);
  } else {
    for (size_t i = 0; i < n; ++i)
      x |= static_cast<uint64_t>(in[i]) << (8 * i);
  }
  return x;
}

} // namespace ferry::serializers::detail
