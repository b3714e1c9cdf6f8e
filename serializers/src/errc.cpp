#include "ferry/serializers/errc.hpp"

#include "ferry/serializers/detail/error_render.hpp"

#include <caf/message.hpp>

namespace ferry::serializers {

std::string to_string(errc x) {
  switch (x) {
  case errc::none:
    return "none";
  case errc::no_family_can_encode:
    return "no_family_can_encode";
  case errc::family_not_allowed:
    return "family_not_allowed";
  case errc::unknown_family:
    return "unknown_family";
  case errc::family_exists:
    return "family_exists";
  case errc::unknown_type:
    return "unknown_type";
  case errc::type_mismatch:
    return "type_mismatch";
  case errc::version_mismatch:
    return "version_mismatch";
  case errc::malformed_header:
    return "malformed_header";
  case errc::truncated_frame:
    return "truncated_frame";
  case errc::malformed_frame:
    return "malformed_frame";
  case errc::length_out_of_range:
    return "length_out_of_range";
  case errc::allocation_limit_exceeded:
    return "allocation_limit_exceeded";
  case errc::payload_too_large:
    return "payload_too_large";
  case errc::encode_failed:
    return "encode_failed";
  case errc::decode_failed:
    return "decode_failed";
  case errc::trailing_bytes:
    return "trailing_bytes";
  case errc::misaligned_frame:
    return "misaligned_frame";
  case errc::nesting_too_deep:
    return "nesting_too_deep";
  case errc::frame_mismatch:
    return "frame_mismatch";
  case errc::stand_in_mismatch:
    return "stand_in_mismatch";
  case errc::family_unavailable:
    return "family_unavailable";
  case errc::actor_handle_without_link:
    return "actor_handle_without_link";
  case errc::actor_handle_unsupported:
    return "actor_handle_unsupported";
  case errc::inexact_value:
    return "inexact_value";
  case errc::invalid_text:
    return "invalid_text";
  case errc::duplicate_key:
    return "duplicate_key";
  case errc::member_mismatch:
    return "member_mismatch";
  case errc::unused_frame:
    return "unused_frame";
  case errc::type_name_taken:
    return "type_name_taken";
  case errc::invalid_type_name:
    return "invalid_type_name";
  }
  return "errc(" + std::to_string(static_cast<int>(x)) + ")";
}

std::string render(const caf::error& x) {
  if (!x)
    return caf::to_string(x); // "none": CAF's accessors need an error
  if (x.category() != caf::atom("ferry_ser"))
    return caf::to_string(x);
  return detail::render_error(x, "ferry_ser",
                              to_string(static_cast<errc>(x.code())));
}

} // namespace ferry::serializers
