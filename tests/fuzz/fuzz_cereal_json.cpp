// libFuzzer target: the cereal.json family decoder.

#include "fuzz_types.hpp"

using namespace ferry::serializers::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = as_bytes(data, size);
  decode_one<cereal_value>("cereal.json", "cereal_value", bytes);
  decode_one<tree>("cereal.json", "tree", bytes);
  decode_split<std::vector<double>>("cereal.json", "doubles", bytes);
  decode_split<std::vector<std::byte>>("cereal.json", "bytes", bytes);
  decode_split<std::string>("cereal.json", "string", bytes);
  return 0;
}
