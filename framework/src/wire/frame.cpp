// frame: frame headers and type names (see wire/frame.hpp).
#include "wire/frame.hpp"

#include "ferry/serializers/detail/little_endian.hpp"

namespace ferry::detail::wire {

using serializers::detail::get_le;
using serializers::detail::put_le;

const char* name_of(frame_type x) {
  switch (x) {
  case frame_type::intro:
    return "intro";
  case frame_type::hello:
    return "hello";
  case frame_type::welcome:
    return "welcome";
  case frame_type::refuse:
    return "refuse";
  case frame_type::heartbeat:
    return "heartbeat";
  case frame_type::goodbye:
    return "goodbye";
  case frame_type::message:
    return "message";
  case frame_type::batch:
    return "batch";
  case frame_type::credit:
    return "credit";
  case frame_type::probe:
    return "probe";
  case frame_type::down:
    return "down";
  case frame_type::exit:
    return "exit";
  case frame_type::link:
    return "link";
  case frame_type::refusal:
    return "refusal";
  case frame_type::transfer_done:
    return "transfer_done";
  case frame_type::lookup:
    return "lookup";
  case frame_type::spawn:
    return "spawn";
  case frame_type::chunk_request:
    return "chunk_request";
  case frame_type::relay_request:
    return "relay_request";
  case frame_type::actor_id:
    return "actor_id";
  case frame_type::chunk:
    return "chunk";
  case frame_type::failed:
    return "failed";
  }
  return "unknown";
}

bool is_known(uint16_t x) {
  return std::string_view{name_of(static_cast<frame_type>(x))} != "unknown";
}

void put_header(std::span<std::byte, header_size> out, const frame_header& x) {
  auto* p = put_le(out.data(), x.length, 8);
  p = put_le(p, static_cast<uint16_t>(x.type), 2);
  put_le(p, x.flags, 2);
}

std::optional<frame_header>
get_header(std::span<const std::byte, header_size> in, std::string& why) {
  frame_header result;
  result.length = get_le(in.data(), 8);
  auto type = static_cast<uint16_t>(get_le(in.data() + 8, 2));
  result.flags = static_cast<uint16_t>(get_le(in.data() + 10, 2));
  if (!is_known(type)) {
    why = "a frame of unknown type " + std::to_string(type);
    return std::nullopt;
  }
  result.type = static_cast<frame_type>(type);
  if (result.flags != 0) {
    why = std::string{"a "} + name_of(result.type) + " frame with flags " +
          std::to_string(result.flags) + " (none are defined)";
    return std::nullopt;
  }
  return result;
}

} // namespace ferry::detail::wire
