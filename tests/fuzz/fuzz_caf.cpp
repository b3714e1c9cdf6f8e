// libFuzzer target: the caf family decoder.

#include "fuzz_types.hpp"

using namespace ferry::serializers::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = as_bytes(data, size);
  decode_one<common>("caf", "common", bytes);
  decode_one<tree>("caf", "tree", bytes);
  decode_split<std::vector<std::byte>>("caf", "bytes", bytes);
  return 0;
}
