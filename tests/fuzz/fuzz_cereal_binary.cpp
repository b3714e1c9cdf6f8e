// libFuzzer target: the cereal.binary family decoder.

#include "fuzz_types.hpp"

using namespace ferry::serializers::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = as_bytes(data, size);
  decode_one<cereal_value>("cereal.binary", "cereal_value", bytes);
  decode_one<tree>("cereal.binary", "tree", bytes);
  decode_split<std::vector<double>>("cereal.binary", "doubles", bytes);
  decode_split<std::vector<std::byte>>("cereal.binary", "bytes", bytes);
  decode_split<std::string>("cereal.binary", "string", bytes);
  return 0;
}
