// Error codes of ferry::serializers.
//
// Every fallible call of the serializers library returns `caf::expected<T>` or
// `caf::error`. Errors built from `errc` carry the category atom `ferry_ser`
// and a context string that names what failed and where (type, family, frame,
// offset) and how to fix it. Render them with `ferry::serializers::render()`,
// or register the category with an actor system (ferry::framework does).
#pragma once

#include <caf/error.hpp>
#include <caf/make_message.hpp>

#include <cstdint>
#include <string>

namespace ferry::serializers {

/// Error codes of the serializers library (category `ferry_ser`).
enum class errc : uint8_t {
  /// Not an error.
  none = 0,
  /// No family in the preference list can encode the value's type.
  no_family_can_encode,
  /// The payload's family is not in the receiver's allowlist.
  family_not_allowed,
  /// The payload names a family this registry does not know.
  unknown_family,
  /// A family with this name is registered already with other functions.
  family_exists,
  /// The payload names a type this registry does not know.
  unknown_type,
  /// The payload's type differs from the type the caller decodes into.
  type_mismatch,
  /// The payload's format version is not supported by this build.
  version_mismatch,
  /// The payload header is malformed.
  malformed_header,
  /// A frame ended before the value did.
  truncated_frame,
  /// A frame holds bytes that do not form a valid value.
  malformed_frame,
  /// A length or count in the input exceeds what the input can hold.
  length_out_of_range,
  /// Decoding would allocate more than the configured limit.
  allocation_limit_exceeded,
  /// The payload is larger than the configured maximum payload size.
  payload_too_large,
  /// The family's library failed to encode the value.
  encode_failed,
  /// The family's library failed to decode the value.
  decode_failed,
  /// A value was left unread at the end of a frame.
  trailing_bytes,
  /// A frame's memory is not aligned for the view type decoded into.
  misaligned_frame,
  /// The input nests deeper than the configured maximum depth.
  nesting_too_deep,
  /// The frames differ from the header's frame count or frame sizes.
  frame_mismatch,
  /// The payload was encoded through a registered stand-in the receiver lacks
  /// (or the receiver has one the sender did not use).
  stand_in_mismatch,
  /// The preference list or allowlist names a family this registry lacks.
  family_unavailable,
  /// An actor handle was encoded or decoded with no handle hook installed:
  /// handles travel only over ferry links (see actor_handles.hpp).
  actor_handle_without_link,
  /// The family cannot carry an actor handle where the value holds one (the
  /// caf family inside a type with its own inspect function).
  actor_handle_unsupported,
  /// A number would not come back bit for bit: the family cannot carry the
  /// value (encoding), or the input holds a number the member's type cannot
  /// hold exactly or one the family's encoder never writes (decoding).
  inexact_value,
  /// A string is not what the family's encoder writes: invalid UTF-8, a
  /// surrogate code point, or a NUL character where the family carries text.
  invalid_text,
  /// A map or set in the input names the same key twice.
  duplicate_key,
  /// A record in the input has members the type does not read, lacks
  /// members it reads, or names or orders them otherwise than its encoder;
  /// or a container in the input is of another kind than its encoder writes
  /// there (a JSON object or msgpack map where it writes an array, or the
  /// reverse).
  member_mismatch,
  /// A frame of the payload was not read by the type it was decoded into.
  unused_frame,
  /// add_type: the type is registered under another name, or the name
  /// belongs to another type.
  type_name_taken,
  /// add_type: the name is empty or longer than 1024 characters.
  invalid_type_name,
};

/// Returns the name of `x`, e.g. `"truncated_frame"`.
std::string to_string(errc x);

/// Returns `x` rendered for humans: category, code name and context. Falls
/// back to `caf::to_string` for errors of other categories.
std::string render(const caf::error& x);

} // namespace ferry::serializers

CAF_ERROR_CODE_ENUM(ferry::serializers::errc, "ferry_ser")
