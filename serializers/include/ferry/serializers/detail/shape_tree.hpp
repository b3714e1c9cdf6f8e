// A type shape parsed into a tree (the grammar is in shape.hpp). Not API.
//
// `parse_shape` reads a shape that may come from another build: at most
// `max_shape_size` bytes and `max_shape_depth` levels, every byte checked
// against the grammar; anything else is no tree. The tree's texts and names
// are views into the parsed text, which must outlive it.
//
// Thread-safety: a tree is a plain value; parsing is pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace ferry::serializers::detail {

struct shape_member;

/// One parsed shape: a record (`fields`), a template (`head<args>`), a
/// scalar (`head` alone) or a custom type (`head` holds its quoted name).
struct shape_node {
  /// The whole text of this shape.
  std::string_view text;
  std::string_view head;
  uint32_t version = 0;
  bool record = false;
  std::vector<shape_node> args;
  std::vector<shape_member> fields;
};

/// A record's member: its name and shape.
struct shape_member {
  std::string_view name;
  shape_node shape;
};

/// Parses `text`; on failure returns nothing and sets `*error_at` (when not
/// null) to the byte where parsing stopped.
std::optional<shape_node> parse_shape(std::string_view text,
                                      size_t* error_at = nullptr);

/// Whether the shape head names an integer (`i8` ... `u64`).
bool is_integer_shape(std::string_view head) noexcept;

/// Whether the shape head names a floating-point number.
bool is_float_shape(std::string_view head) noexcept;

/// Bytes of a scalar of shape head `head` in cereal's binary formats; 0 for
/// any other head (and for `f80`, whose size is the platform's).
size_t binary_scalar_size(std::string_view head) noexcept;

/// Bytes per character of a string of shape head `head` (`str`, `str16`,
/// ...); 0 for any other head.
size_t binary_string_width(std::string_view head) noexcept;

/// The member of `record` named `name`, or null.
const shape_node* field_of(const shape_node& record,
                           std::string_view name) noexcept;

} // namespace ferry::serializers::detail
