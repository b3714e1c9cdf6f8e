#include "ferry/serializers/family.hpp"

namespace ferry::serializers {

family::~family() = default;

std::string family::why_not(std::type_index type) const {
  return std::string{"this family has no functions for "} + type.name();
}

uint32_t family::version() const noexcept {
  return 1;
}

bool function_family::can_encode(std::type_index type) const {
  return entries_.count(type) != 0;
}

caf::expected<std::vector<frame>>
function_family::encode(std::type_index type, const void* value,
                        const context& ctx) const {
  auto i = entries_.find(type);
  if (i == entries_.end())
    return detail::make_error(
      errc::encode_failed,
      std::string{"function_family has no encoder for "} + type.name());
  return i->second.encode(value, ctx);
}

caf::error function_family::decode(std::type_index type,
                                   std::span<const frame> frames, void* out,
                                   const context& ctx,
                                   const limits& lim) const {
  auto i = entries_.find(type);
  if (i == entries_.end())
    return detail::make_error(
      errc::decode_failed,
      std::string{"function_family has no decoder for "} + type.name());
  return i->second.decode(frames, out, ctx, lim);
}

} // namespace ferry::serializers
