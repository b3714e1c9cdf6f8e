// libFuzzer target: the payload header decoder.

#include "fuzz_types.hpp"

#include <cstdlib>

using namespace ferry::serializers;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  limits lim;
  lim.max_frames = 64;
  std::span<const std::byte> bytes{reinterpret_cast<const std::byte*>(data),
                                   size};
  auto h = decode_header(bytes, lim);
  // header_key reads any bytes without a fault; the frame sizes after a key
  // read alone (what a link does for a key it accepted before) must agree
  // with the whole header, and never allocate beyond lim.max_frames.
  auto key = header_key(bytes);
  std::vector<uint64_t> sizes;
  auto sizes_err = key.empty()
                     ? caf::error{}
                     : decode_frame_sizes(bytes, key.size(), lim, sizes);
  if (h) {
    // What decodes must encode to the same bytes, from the whole header and
    // from its key.
    auto again = encode_header(*h);
    if (again.size() != size
        || std::memcmp(again.data(), data, size) != 0)
      std::abort();
    if (key.empty() || sizes_err || sizes != h->frame_sizes
        || encode_header_key(*h).size() != key.size())
      std::abort();
  }
  if (sizes.size() > lim.max_frames)
    std::abort();
  return 0;
}
