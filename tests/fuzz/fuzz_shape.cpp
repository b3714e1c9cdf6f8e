// libFuzzer target: a type shape as a peer sends it in its hello
// (ferry/serializers/shape.hpp): member names, types, nesting and declared
// versions (`@N`). The input is the peer's shape; it is compared with the
// shapes of a few types of this build. `shape_difference` must describe
// anything malformed, too long or too deep, never crash or read out of
// bounds; it reports no difference exactly when the two texts are equal;
// and comparing the reported difference with itself never finds one.
#include "ferry/serializers/shape.hpp"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fuzz_shape {

struct line {
  std::string item;
  int32_t qty = 0;
};

enum class status : uint8_t { open, closed };

struct order {
  static constexpr uint32_t ferry_version = 2;
  uint64_t id = 0;
  std::vector<line> lines;
  std::map<std::string, double> prices;
  std::optional<status> state;
};

const std::vector<std::string>& our_shapes() {
  static const std::vector<std::string> shapes{
    ferry::serializers::shape_of<line>(),
    ferry::serializers::shape_of<order>(),
    ferry::serializers::shape_of<std::vector<std::string>>(),
  };
  return shapes;
}

} // namespace fuzz_shape

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view theirs{reinterpret_cast<const char*>(data), size};
  for (auto& mine : fuzz_shape::our_shapes()) {
    auto diff = ferry::serializers::shape_difference("t", mine, theirs,
                                                     "here", "there");
    if (diff.has_value() == (theirs == mine))
      std::abort();
    if (diff && diff->empty())
      std::abort();
  }
  if (ferry::serializers::shape_difference("t", theirs, theirs, "a", "b"))
    std::abort();
  return 0;
}
