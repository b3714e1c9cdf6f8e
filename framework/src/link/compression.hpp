// Compression of inline frames (LZ4, Zstandard).
//
// A link compresses inline frames of at least `compression_threshold`
// bytes with its codec (`link_config::compression`). Decompression treats
// the peer's claims as hostile: the declared size is checked against the
// link's max-message-size and against the codec's largest possible ratio
// before the buffer is allocated.
//
// Thread-safety: free functions without state.
#pragma once

#include "wire/protocol.hpp"

#include "ferry/link_config.hpp"

#include <caf/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ferry::detail {

/// Compresses `in` with `codec` (lz4 or zstd).
caf::expected<std::vector<std::byte>> compress(compression codec,
                                               std::span<const std::byte> in);

/// Decompresses a frame of `kind` (inline_lz4 or inline_zstd) that claims to
/// hold `size` bytes, refusing claims above `limit` or beyond the codec's
/// ratio.
caf::expected<std::vector<std::byte>> decompress(frame_kind kind,
                                                 std::span<const std::byte> in,
                                                 uint64_t size, uint64_t limit);

} // namespace ferry::detail
