// libFuzzer target: the payload header decoder.

#include "fuzz_types.hpp"

#include <cstdlib>

using namespace ferry::serializers;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  limits lim;
  lim.max_frames = 64;
  auto h = decode_header({reinterpret_cast<const std::byte*>(data), size}, lim);
  if (h) {
    // What decodes must encode to the same bytes.
    auto again = encode_header(*h);
    if (again.size() != size
        || std::memcmp(again.data(), data, size) != 0)
      std::abort();
  }
  return 0;
}
