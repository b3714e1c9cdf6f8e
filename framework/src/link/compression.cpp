// Compression of inline frames (see link/compression.hpp).
#include "link/compression.hpp"

#include "ferry/errc.hpp"

#include <lz4.h>
#include <zstd.h>

#include <limits>
#include <string>

namespace ferry::detail {

caf::expected<std::vector<std::byte>> compress(compression codec,
                                               std::span<const std::byte> in) {
  std::vector<std::byte> out;
  if (codec == compression::lz4) {
    if (in.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE))
      return caf::make_error(errc::message_too_large,
                             "a frame of " + std::to_string(in.size()) +
                               " bytes is above lz4's limit of " +
                               std::to_string(LZ4_MAX_INPUT_SIZE) +
                               "; use compression \"zstd\" or a lower "
                               "pull-threshold or spill-threshold");
    out.resize(
      static_cast<size_t>(LZ4_compressBound(static_cast<int>(in.size()))));
    auto n = LZ4_compress_default(reinterpret_cast<const char*>(in.data()),
                                  reinterpret_cast<char*>(out.data()),
                                  static_cast<int>(in.size()),
                                  static_cast<int>(out.size()));
    if (n <= 0)
      return caf::make_error(errc::message_too_large, "lz4 compression failed");
    out.resize(static_cast<size_t>(n));
  } else {
    out.resize(ZSTD_compressBound(in.size()));
    auto n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 1);
    if (ZSTD_isError(n))
      return caf::make_error(errc::message_too_large,
                             std::string{"zstd compression failed: "} +
                               ZSTD_getErrorName(n));
    out.resize(n);
  }
  return out;
}

caf::expected<std::vector<std::byte>> decompress(frame_kind kind,
                                                 std::span<const std::byte> in,
                                                 uint64_t size,
                                                 uint64_t limit) {
  if (size > limit)
    return caf::make_error(errc::message_too_large,
                           "compressed frame claims " + std::to_string(size) +
                             " bytes, above the link's max-message-size of " +
                             std::to_string(limit));
  // Everything a peer claims is checked before the buffer is allocated: no
  // codec turns a few bytes into more than its best ratio allows (lz4: 255
  // to 1; zstd: a 128 KiB block from a 4-byte RLE block), and a zstd frame
  // states its own size.
  auto refuse = [&](const char* codec, const std::string& why) {
    return caf::make_error(errc::decode_failed,
                           std::string{codec} + " frame of " +
                             std::to_string(in.size()) +
                             " bytes cannot decompress to its declared " +
                             std::to_string(size) + " bytes: " + why);
  };
  if (kind == frame_kind::inline_lz4) {
    if (size > static_cast<uint64_t>(std::numeric_limits<int>::max()) ||
        in.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
      return refuse("lz4", "above lz4's 2 GiB limit");
    if (size > uint64_t{255} * in.size() + 255)
      return refuse("lz4", "more than lz4's largest ratio (255:1)");
  } else {
    constexpr uint64_t zstd_block = 128 * 1024;
    auto declared = ZSTD_getFrameContentSize(in.data(), in.size());
    if (declared != size)
      return refuse("zstd", "the frame's header says otherwise");
    if (size / zstd_block > in.size() / 4 + 1)
      return refuse("zstd", "more than zstd's largest ratio");
  }
  std::vector<std::byte> out(size);
  if (kind == frame_kind::inline_lz4) {
    auto n =
      LZ4_decompress_safe(reinterpret_cast<const char*>(in.data()),
                          reinterpret_cast<char*>(out.data()),
                          static_cast<int>(in.size()), static_cast<int>(size));
    if (n < 0 || static_cast<uint64_t>(n) != size)
      return caf::make_error(errc::decode_failed,
                             "lz4 frame does not decompress to its declared "
                             "size of " +
                               std::to_string(size) + " bytes");
  } else {
    auto n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n) || n != size)
      return caf::make_error(errc::decode_failed,
                             "zstd frame does not decompress to its declared "
                             "size of " +
                               std::to_string(size) + " bytes");
  }
  return out;
}

} // namespace ferry::detail
