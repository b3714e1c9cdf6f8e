// Payloads: what a family makes of a value, and the fixed header codec.
//
// A payload is a small header (family, type name, format version, stand-in,
// frame sizes) plus frames. The header travels in a fixed, bounded binary
// format that is not user-selectable (`encode_header` / `decode_header`);
// frames travel as they are, inline or as store objects. `decode_header`
// treats its input as hostile: every length is checked against the bytes
// present and against `limits`, and any fault is a typed error.
//
// Header wire format, version 1, all integers little-endian:
//
//     u8  magic 'F', u8 magic 'S', u8 header version (1)
//     u16 family length, family bytes   (printable ASCII, no spaces)
//     u16 type length,   type bytes     (printable ASCII)
//     u16 stand-in length, stand-in bytes (empty: none)
//     u32 format version
//     u32 frame count, then u64 size per frame
//
// The bytes from the magic through the format version are the header's *key*:
// two headers with equal keys name the same family, type, stand-in and
// version. A receiver that checked one key (`decode_header`) may read later
// headers with that key by their frame sizes alone (`header_key`,
// `decode_frame_sizes`), and a sender may write them from a key it made once
// (`encode_header_key`, `encode_header(key, frames)`).
//
// Thread-safety: plain values and pure functions.
#pragma once

#include "ferry/serializers/frame.hpp"
#include "ferry/serializers/options.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ferry::serializers {

/// The header of a payload.
struct payload_header {
  /// Name of the family that made the frames, e.g. `"cereal.binary"`.
  std::string family;
  /// Registered name of the value's type.
  std::string type_name;
  /// The family's format version.
  uint32_t version = 1;
  /// Size of each frame in bytes.
  std::vector<uint64_t> frame_sizes;
  /// Name of the registered stand-in type the value was converted to before
  /// encoding (`registry::register_serializer`); empty when none.
  std::string stand_in;

  friend bool operator==(const payload_header&,
                         const payload_header&) = default;
};

/// A header plus its frames.
struct payload {
  payload_header header;
  std::vector<frame> frames;

  /// Returns the sum of the frame sizes.
  [[nodiscard]] uint64_t size() const noexcept {
    uint64_t result = 0;
    for (auto& f : frames)
      result += f.size();
    return result;
  }
};

/// Version of the header wire format written by `encode_header`.
inline constexpr uint8_t header_format_version = 1;

/// Returns `x` in the fixed header wire format.
[[nodiscard]] std::vector<std::byte> encode_header(const payload_header& x);

/// Returns the key of `x`'s header: its wire format up to the frame count.
[[nodiscard]] std::vector<std::byte> encode_header_key(const payload_header& x);

/// Returns the header made of `key` (from `encode_header_key`) and the sizes
/// of `frames`: the same bytes as `encode_header` of that header.
[[nodiscard]] std::vector<std::byte>
encode_header(std::span<const std::byte> key, std::span<const frame> frames);

/// Returns the size of the header made of a key of `key_size` bytes and
/// `frame_count` frame sizes.
[[nodiscard]] constexpr size_t header_size(size_t key_size,
                                           size_t frame_count) noexcept {
  return key_size + 4 + 8 * frame_count;
}

/// Writes the bytes `encode_header(key, frames)` returns to `out`, which
/// holds `header_size(key.size(), frames.size())` bytes.
void write_header(std::span<const std::byte> key, std::span<const frame> frames,
                  std::byte* out) noexcept;

/// Returns the key at the start of the hostile header `bytes`, found by its
/// three length fields alone (nothing in it is checked); an empty span when
/// `bytes` cannot hold one. Equal to a key that `decode_header` accepted, the
/// key is as valid; otherwise call `decode_header`.
[[nodiscard]] std::span<const std::byte>
header_key(std::span<const std::byte> bytes) noexcept;

/// Reads the frame count and sizes that follow the first `key_size` bytes of
/// the hostile header `bytes` into `sizes`, with `decode_header`'s checks
/// against the input and `lim` (`max_frames`, `max_payload_bytes`, trailing
/// bytes).
[[nodiscard]] caf::error decode_frame_sizes(std::span<const std::byte> bytes,
                                            size_t key_size, const limits& lim,
                                            std::vector<uint64_t>& sizes);

/// Parses a header from hostile `bytes`; every length is checked against the
/// input and `lim` (`max_name_bytes`, `max_frames`, `max_payload_bytes`).
/// Trailing bytes are an error.
[[nodiscard]] caf::expected<payload_header>
decode_header(std::span<const std::byte> bytes, const limits& lim);

/// Parses a header from hostile `bytes` into `out` (reusing its storage), as
/// the overload above; on error `out` holds what was read before the fault.
[[nodiscard]] caf::error decode_header(std::span<const std::byte> bytes,
                                       const limits& lim, payload_header& out);

} // namespace ferry::serializers
