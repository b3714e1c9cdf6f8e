// Type shapes: what a message type looks like, in a form two builds compare.
//
// `shape_of<T>()` describes `T` as a string: its members' names and types,
// recursively, as ferry's families walk them (see detail/capability.hpp),
// and the version the type declares. Two nodes exchange the shapes of the
// types they registered when they make a link; a type whose shape differs
// is never decoded as if it matched (docs/evolution.md).
//
// Grammar (no spaces):
//   shape   := scalar | 'str' | 'enum<' shape '>' | 'list<' shape '>'
//            | 'set<' shape '>' | 'multiset<' shape '>'
//            | 'map<' shape ',' shape '>' | 'multimap<' shape ',' shape '>'
//            | 'array<' shape ',' digits '>' | 'tuple<' shapes '>'
//            | 'pair<' shape ',' shape '>'
//            | 'opt<' shape '>' | 'variant<' shapes '>' | 'ptr<' shape '>'
//            | 'separate<' shape '>' | 'view<' shape '>'
//            | version? '{' (name ':' shape (',' name ':' shape)*)? '}'
//            | 'custom"' label '"' version?
//   version := '@' digits                       (only when not 0)
//   scalar  := bool | char | byte | i8..i64 | u8..u64 | f32 | f64 | f80 | ...
// An aggregate without serialization functions of its own is a record of its
// members (`member_names`); any other class (its own serialize, inspect or
// MSGPACK_DEFINE, a `wrapped` codec, or a library type) is `custom` with its
// C++ name and declared version: ferry cannot see inside it, so bump its
// version whenever its serialization changes.
//
// A type declares its version as `static constexpr uint32_t ferry_version`,
// or through a specialisation of `type_version<T>` (type_version.hpp).
//
// `shape_difference` compares a shape of this build with one a peer sent
// (hostile input: bounded length and depth, malformed text is reported, never
// trusted) and names the first member that differs.
//
// Thread-safety: everything here is pure.
#pragma once

#include "ferry/serializers/array_view.hpp"
#include "ferry/serializers/detail/capability.hpp"
#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/detail/shape_tree.hpp"
#include "ferry/serializers/detail/type_traits.hpp"
#include "ferry/serializers/member_names.hpp"
#include "ferry/serializers/separate.hpp"
#include "ferry/serializers/type_version.hpp"
#include "ferry/serializers/wrap.hpp"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>

namespace ferry::serializers {

/// Longest shape ferry accepts from a peer, in bytes.
inline constexpr size_t max_shape_size = 64 * 1024;

/// Deepest nesting ferry accepts in a peer's shape.
inline constexpr size_t max_shape_depth = 64;

namespace detail {

template <class T>
std::string shape_text();

/// Joins `parts` (one allocation; GCC 12 warns falsely on chains of `+`).
inline std::string join(std::initializer_list<std::string_view> parts) {
  std::string result;
  size_t size = 0;
  for (auto part : parts)
    size += part.size();
  result.reserve(size);
  for (auto part : parts)
    result.append(part);
  return result;
}

inline std::string version_suffix(uint32_t version) {
  return version == 0 ? std::string{} : join({"@", std::to_string(version)});
}

template <class T>
std::string scalar_shape() {
  if constexpr (std::is_same_v<T, bool>)
    return "bool";
  else if constexpr (std::is_same_v<T, char>)
    return "char";
  else if constexpr (std::is_floating_point_v<T>)
    return sizeof(T) == 4 ? "f32" : sizeof(T) == 8 ? "f64" : "f80";
  else if constexpr (std::is_same_v<T, wchar_t> || std::is_same_v<T, char8_t> ||
                     std::is_same_v<T, char16_t> || std::is_same_v<T, char32_t>)
    return join({"char", std::to_string(sizeof(T) * 8)});
  else
    return join(
      {std::is_signed_v<T> ? "i" : "u", std::to_string(sizeof(T) * 8)});
}

template <class Tuple, size_t... Is>
std::string shape_list(std::index_sequence<Is...>) {
  std::string result;
  ((result.append(Is == 0 ? "" : ",")
      .append(shape_text<std::tuple_element_t<Is, Tuple>>())),
   ...);
  return result;
}

template <class Tuple>
std::string shape_list() {
  return shape_list<Tuple>(
    std::make_index_sequence<std::tuple_size_v<Tuple>>{});
}

template <class T, size_t... Is>
std::string record_shape(std::index_sequence<Is...>) {
  [[maybe_unused]] constexpr auto names =
    ::ferry::serializers::member_names<T>();
  auto result = version_suffix(type_version<T>::value);
  result += '{';
  ((result.append(Is == 0 ? "" : ",")
      .append(names[Is])
      .append(":")
      .append(shape_text<std::tuple_element_t<Is, field_types<T>>>())),
   ...);
  result += '}';
  return result;
}

template <class T>
std::string custom_shape() {
  return join({"custom\"", type_label<T>(), "\"",
               version_suffix(type_version<T>::value)});
}

/// `head<inner>`.
inline std::string templ(std::string_view head, std::string_view inner) {
  return join({head, "<", inner, ">"});
}

template <class T>
std::string shape_text() {
  using U = std::remove_cv_t<T>;
  if constexpr (is_instance_v<U, wrapped>)
    return custom_shape<U>();
  else if constexpr (is_instance_v<U, separate>)
    return templ("separate", shape_text<typename U::value_type>());
  else if constexpr (is_instance_v<U, array_view> || is_span<U>::value)
    return templ("view",
                 shape_text<std::remove_cv_t<typename U::value_type>>());
  else if constexpr (std::is_same_v<U, std::byte>)
    return "byte";
  else if constexpr (std::is_arithmetic_v<U>)
    return scalar_shape<U>();
  else if constexpr (std::is_enum_v<U>)
    return templ("enum", scalar_shape<std::underlying_type_t<U>>());
  else if constexpr (std::is_same_v<U, std::string>)
    return "str";
  else if constexpr (is_string_v<U>)
    return join({"str", std::to_string(sizeof(typename U::value_type) * 8)});
  else if constexpr (is_map_v<U>)
    return templ(is_unique_keyed_v<U> ? "map" : "multimap",
                 join({shape_text<typename U::key_type>(), ",",
                       shape_text<typename U::mapped_type>()}));
  else if constexpr (is_instance_v<U, std::set> ||
                     is_instance_v<U, std::unordered_set>)
    return templ("set", shape_text<typename U::value_type>());
  else if constexpr (is_instance_v<U, std::multiset> ||
                     is_instance_v<U, std::unordered_multiset>)
    return templ("multiset", shape_text<typename U::value_type>());
  else if constexpr (is_sequence_v<U>)
    return templ("list", shape_text<typename U::value_type>());
  else if constexpr (is_std_array<U>::value)
    return templ("array", join({shape_text<typename U::value_type>(), ",",
                                std::to_string(std::tuple_size_v<U>)}));
  else if constexpr (is_instance_v<U, std::pair>)
    return templ("pair", join({shape_text<typename U::first_type>(), ",",
                               shape_text<typename U::second_type>()}));
  else if constexpr (is_instance_v<U, std::tuple>)
    return templ("tuple", shape_list<U>());
  else if constexpr (is_instance_v<U, std::optional>)
    return templ("opt", shape_text<typename U::value_type>());
  else if constexpr (is_instance_v<U, std::variant>)
    return templ("variant", shape_list<variant_tuple<U>>());
  else if constexpr (is_smart_ptr_v<U>)
    return templ("ptr", shape_text<typename U::element_type>());
  else if constexpr (is_reflectable_v<U> && !has_own_any<U>)
    return record_shape<U>(std::make_index_sequence<field_count<U>()>{});
  else
    return custom_shape<U>();
}

} // namespace detail

/// Returns the shape of `T` (see the file comment for the grammar).
template <class T>
[[nodiscard]] std::string shape_of() {
  return detail::shape_text<T>();
}

/// Returns the 64-bit FNV-1a hash of `shape`: a short name for a shape in
/// messages and logs.
[[nodiscard]] uint64_t shape_fingerprint(std::string_view shape) noexcept;

/// Returns `shape_fingerprint(shape)` as 16 hexadecimal digits.
[[nodiscard]] std::string shape_fingerprint_text(std::string_view shape);

/// The built-in families that carry an evolving type (type_version.hpp)
/// between two builds with different members: msgpack and cereal.json by
/// member name; cereal.binary and cereal.portable by the writer's shape,
/// which a link's hello carries (the reader walks the writer's layout,
/// detail/cereal_resolve.hpp).
inline constexpr std::array<std::string_view, 4> bridging_families{
  "msgpack", "cereal.json", "cereal.binary", "cereal.portable"};

/// Whether `family` carries a value of the type of shape `mine` and one of
/// shape `theirs` (of another build) both ways without a wrong value. Both
/// must be records with a version whose members of one name have shapes
/// that bridge too: equal; integers of any width and signedness, or
/// floating point of any width, where a value that does not fit is refused
/// on decode; the same container of bridging elements (tuples, variants and
/// arrays only when equal). Members on one side only are skipped by the
/// reader or take their defaults; in cereal.binary and cereal.portable they
/// must be values whose shape delimits their bytes (no custom types,
/// pointers, `separate` members or `long double`), and containers bridge
/// only as lists, sets, maps and optionals. False for any other family and
/// for malformed input.
[[nodiscard]] bool shapes_bridge(std::string_view family, std::string_view mine,
                                 std::string_view theirs);

/// Compares the shape `mine` of type `type` with the shape `theirs` another
/// build sent, and returns what differs first, in words, naming the member
/// path (`order.lines[].qty`) and calling the two sides `here` and `there`
/// (for example "node alpha" and "node beta"); none when they are equal.
/// `theirs` is untrusted: a malformed, too long or too deep shape is itself
/// reported as the difference.
[[nodiscard]] std::optional<std::string>
shape_difference(std::string_view type, std::string_view mine,
                 std::string_view theirs, std::string_view here,
                 std::string_view there);

} // namespace ferry::serializers
