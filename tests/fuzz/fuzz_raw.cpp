// libFuzzer target: the raw family decoder (values, copies and views).

#include "fuzz_types.hpp"

using namespace ferry::serializers;
using namespace ferry::serializers::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = as_bytes(data, size);
  decode_one<sample>("raw", "sample", bytes);
  decode_one<std::vector<sample>>("raw", "samples", bytes);
  decode_one<std::vector<double>>("raw", "doubles", bytes);
  decode_one<std::span<const double>>("raw", "doubles", bytes);
  decode_one<array_view<double>>("raw", "doubles", bytes);
  return 0;
}
