// libFuzzer target: a type shape as a peer sends it in its hello
// (ferry/serializers/shape.hpp), and bytes read by it. The input is the
// peer's shape, optionally followed by a NUL byte and a cereal payload.
// - The shape is compared with the shapes of a few types of this build.
//   `shape_difference` must describe anything malformed, too long or too
//   deep, never crash or read out of bounds; it reports no difference
//   exactly when the two texts are equal; and comparing the reported
//   difference with itself never finds one. `shapes_bridge` answers for
//   every family without crashing.
// - The payload is decoded as `order` in cereal.binary and cereal.portable
//   with the shape as the writer's (writer_shapes.hpp): never a crash, and
//   when the shape is this build's own, exactly what decoding without it
//   gives.
#include "ferry/serializers/all.hpp"
#include "ferry/serializers/writer_shapes.hpp"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fuzz_shape {

struct line {
  static constexpr uint32_t ferry_version = 1;
  std::string item;
  int32_t qty = 0;
  bool operator==(const line&) const = default;
};

enum class status : uint8_t { open, closed };

struct order {
  static constexpr uint32_t ferry_version = 2;
  uint64_t id = 0;
  std::vector<line> lines;
  std::map<std::string, double> prices;
  std::optional<status> state;
  float weight = 0;
  bool operator==(const order&) const = default;
};

const std::vector<std::string>& our_shapes() {
  static const std::vector<std::string> shapes{
    ferry::serializers::shape_of<line>(),
    ferry::serializers::shape_of<order>(),
    ferry::serializers::shape_of<std::vector<std::string>>(),
  };
  return shapes;
}

const ferry::serializers::registry& reader() {
  static const auto* reg = [] {
    auto result = new ferry::serializers::registry;
    result->add_type<order>("order");
    return result;
  }();
  return *reg;
}

/// Decodes `bytes` as an `order` in `family`, by `shapes` when not null.
caf::expected<order>
decode(const char* family, std::span<const std::byte> bytes,
       std::shared_ptr<const ferry::serializers::writer_shapes> shapes) {
  ferry::serializers::payload p;
  p.header.family = family;
  p.header.type_name = "order";
  p.header.frame_sizes = {bytes.size()};
  p.frames.push_back(ferry::serializers::frame::view(bytes));
  ferry::serializers::decode_options opts;
  opts.deserializers = {family};
  opts.limits.max_depth = 64;
  opts.limits.allocation_factor = 16;
  opts.writer_shapes = std::move(shapes);
  return reader().decode<order>(p, opts);
}

} // namespace fuzz_shape

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ferry::serializers;
  std::string_view input{reinterpret_cast<const char*>(data), size};
  auto nul = input.find('\0');
  auto theirs = input.substr(0, nul);
  for (auto& mine : fuzz_shape::our_shapes()) {
    auto diff = shape_difference("t", mine, theirs, "here", "there");
    if (diff.has_value() == (theirs == mine))
      std::abort();
    if (diff && diff->empty())
      std::abort();
    for (auto family : bridging_families)
      (void) shapes_bridge(family, mine, theirs);
  }
  if (shape_difference("t", theirs, theirs, "a", "b"))
    std::abort();
  if (nul == std::string_view::npos)
    return 0;
  auto bytes = std::as_bytes(std::span{data + nul + 1, size - nul - 1});
  auto shapes = std::make_shared<writer_shapes>();
  if (!shapes->add("order", std::string{theirs}))
    return 0;
  for (auto family : {"cereal.binary", "cereal.portable"}) {
    auto by_shape = fuzz_shape::decode(family, bytes, shapes);
    if (theirs != fuzz_shape::our_shapes()[1])
      continue;
    auto plain = fuzz_shape::decode(family, bytes, nullptr);
    if (static_cast<bool>(by_shape) != static_cast<bool>(plain))
      std::abort();
    if (plain && !(*plain == *by_shape))
      std::abort();
  }
  return 0;
}
