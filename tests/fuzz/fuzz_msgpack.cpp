// libFuzzer target: the msgpack family decoder.

#include "fuzz_types.hpp"

using namespace ferry::serializers::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = as_bytes(data, size);
  decode_one<msgpack_value>("msgpack", "msgpack_value", bytes);
  decode_one<tree>("msgpack", "tree", bytes);
  decode_split<std::vector<std::byte>>("msgpack", "bytes", bytes);
  decode_split<std::string>("msgpack", "string", bytes);
  return 0;
}
