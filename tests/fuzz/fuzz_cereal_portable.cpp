// libFuzzer target: the cereal.portable family decoder.

#include "fuzz_types.hpp"

using namespace ferry::serializers::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = as_bytes(data, size);
  decode_one<cereal_value>("cereal.portable", "cereal_value", bytes);
  decode_one<tree>("cereal.portable", "tree", bytes);
  decode_split<std::vector<double>>("cereal.portable", "doubles", bytes);
  decode_split<std::vector<std::byte>>("cereal.portable", "bytes", bytes);
  decode_split<std::string>("cereal.portable", "string", bytes);
  return 0;
}
