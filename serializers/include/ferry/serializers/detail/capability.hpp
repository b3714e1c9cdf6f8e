// Which built-in family can encode which type, decided at compile time, and
// why not, in words. Not API.
//
// `deep_ok<Policy, T>()` walks T: standard containers, optional, variant,
// smart pointers and reflectable aggregates are decomposed; a type with its
// own serialization for the family, or a leaf the family's library supports,
// ends the walk. `why_not<Policy, T>()` follows the same walk and names the
// first member type that blocks the family, with the fix.
//
// Enums need a fixed underlying type (`fixed_enum`): cereal, msgpack and CAF
// all decode an enum by casting a number of its underlying type, which is
// undefined behaviour for a number outside an unfixed enum's range. (Types
// with their own serialization end the walk; enums inside them are theirs.)
#pragma once

#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/detail/type_traits.hpp"

#include <string>

namespace ferry::serializers::detail {

template <class T>
struct wrapped_traits {
  static constexpr bool is_wrapped = false;
};

template <class T, class Codec>
struct wrapped_traits<wrapped<T, Codec>> {
  static constexpr bool is_wrapped = true;
  using stand_in =
    std::remove_cvref_t<decltype(Codec::to(std::declval<const T&>()))>;
};

template <class P, class T>
constexpr bool deep_ok();

template <class P, class Tuple, size_t... Is>
constexpr bool all_ok(std::index_sequence<Is...>) {
  return (deep_ok<P, std::tuple_element_t<Is, Tuple>>() && ...);
}

template <class P, class Tuple>
constexpr bool all_ok() {
  return all_ok<P, Tuple>(std::make_index_sequence<std::tuple_size_v<Tuple>>{});
}

template <class T>
struct variant_types;

template <class... Ts>
struct variant_types<std::variant<Ts...>> {
  using type = std::tuple<Ts...>;
};

template <class T>
using variant_tuple = typename variant_types<T>::type;

/// True if the family's library would silently skip `U` (a policy may define
/// `skipped<U>()`; the caf family does, for CAF's allowed-unsafe types).
template <class P, class U>
constexpr bool policy_skips() {
  if constexpr (requires { P::template skipped<U>(); })
    return P::template skipped<U>();
  else
    return false;
}

template <class P, class T>
constexpr bool deep_ok() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_reference_v<T> || is_lock_v<U> || is_thread_v<U> ||
                std::is_pointer_v<U> || std::is_member_pointer_v<U> ||
                policy_skips<P, U>())
    return false;
  else if constexpr (wrapped_traits<U>::is_wrapped)
    return deep_ok<P, typename wrapped_traits<U>::stand_in>();
  else if constexpr (is_instance_v<U, separate>)
    return P::separate_frames && deep_ok<P, typename U::value_type>();
  else if constexpr (is_instance_v<U, array_view> || is_span<U>::value)
    return false;
  else if constexpr (P::template own<U>())
    return true;
  else if constexpr (std::is_arithmetic_v<U>)
    return P::template scalar<U>();
  else if constexpr (std::is_enum_v<U>)
    return P::enums && fixed_enum<U>;
  else if constexpr (is_string_v<U>)
    return P::template string<U>();
  else if constexpr (is_sequence_v<U>)
    return P::template sequence<U>() && deep_ok<P, typename U::value_type>();
  else if constexpr (is_map_v<U>)
    return deep_ok<P, typename U::key_type>() &&
           deep_ok<P, typename U::mapped_type>();
  else if constexpr (is_std_array<U>::value)
    return deep_ok<P, typename U::value_type>();
  else if constexpr (is_instance_v<U, std::pair>)
    return deep_ok<P, typename U::first_type>() &&
           deep_ok<P, typename U::second_type>();
  else if constexpr (is_instance_v<U, std::tuple>)
    return all_ok<P, U>();
  else if constexpr (is_instance_v<U, std::optional>)
    return P::optionals && deep_ok<P, typename U::value_type>();
  else if constexpr (is_instance_v<U, std::variant>)
    return P::variants && all_ok<P, variant_tuple<U>>();
  else if constexpr (is_smart_ptr_v<U>)
    return P::template pointer<U>() && deep_ok<P, typename U::element_type>();
  else if constexpr (is_reflectable_v<U>)
    return all_ok<P, field_types<U>>();
  else
    return P::template leaf<U>();
}

template <class P, class T>
std::string why_not();

template <class P, class Tuple, size_t... Is>
std::string first_why_not(const char* what, std::index_sequence<Is...>) {
  std::string result;
  ((result = !result.empty()
               ? result
               : (deep_ok<P, std::tuple_element_t<Is, Tuple>>()
                    ? std::string{}
                    : std::string{what} + " #" + std::to_string(Is) + " (" +
                        type_label<std::tuple_element_t<Is, Tuple>>() +
                        "): " + why_not<P, std::tuple_element_t<Is, Tuple>>())),
   ...);
  return result;
}

template <class P, class Tuple>
std::string first_why_not(const char* what) {
  return first_why_not<P, Tuple>(
    what, std::make_index_sequence<std::tuple_size_v<Tuple>>{});
}

template <class P, class T>
std::string why_not() {
  using U = std::remove_cv_t<T>;
  if constexpr (deep_ok<P, T>())
    return {};
  else if constexpr (policy_skips<P, U>())
    return type_label<U>() +
           " is marked CAF_ALLOW_UNSAFE_MESSAGE_TYPE, which makes CAF 0.17's "
           "serializer skip it (it would arrive empty); use another family, "
           "or drop the mark if the type has an inspect function or is a "
           "plain aggregate (those need none)";
  else if constexpr (is_lock_v<U>)
    return type_label<U>() +
           " is a lock, which no family can send; leave it out with the "
           "type's own serialize/inspect, or register_serializer<T> with a "
           "stand-in without it";
  else if constexpr (is_thread_v<U>)
    return type_label<U>() +
           " is a thread, which no family can send; leave it out with the "
           "type's own serialize/inspect, or register_serializer<T> with a "
           "stand-in without it";
  else if constexpr (std::is_pointer_v<U> || std::is_member_pointer_v<U>)
    return type_label<U>() +
           " is a raw pointer, meaningless in another process; hold the "
           "value, a std::shared_ptr or a std::unique_ptr instead";
  else if constexpr (std::is_reference_v<T>)
    return "references cannot be decoded; hold a value";
  else if constexpr (wrapped_traits<U>::is_wrapped)
    return "its stand-in: " +
           why_not<P, typename wrapped_traits<U>::stand_in>();
  else if constexpr (is_instance_v<U, separate>)
    return P::separate_frames
             ? "its content: " + why_not<P, typename U::value_type>()
             : std::string{P::name} + " has no separate frames";
  else if constexpr (is_instance_v<U, array_view> || is_span<U>::value)
    return std::string{P::name} +
           " cannot decode into a view; views are for the raw family "
           "(use std::vector to copy)";
  else if constexpr (std::is_enum_v<U> && P::enums)
    return type_label<U>() +
           " is an enum without a fixed underlying type: decoding a number "
           "outside its enumerators' range would be undefined behaviour, "
           "and a hostile sender picks the number; give it one (`enum "
           "class E`, or `enum E : int`)";
  else if constexpr (std::is_arithmetic_v<U> || std::is_enum_v<U> ||
                     is_string_v<U>)
    return std::string{P::name} + " has no support for " + type_label<U>();
  else if constexpr (is_sequence_v<U>)
    return P::template sequence<U>()
             ? "element: " + why_not<P, typename U::value_type>()
             : std::string{P::name} + " has no support for " + type_label<U>();
  else if constexpr (is_map_v<U>)
    return deep_ok<P, typename U::key_type>()
             ? "mapped value: " + why_not<P, typename U::mapped_type>()
             : "key: " + why_not<P, typename U::key_type>();
  else if constexpr (is_std_array<U>::value)
    return "element: " + why_not<P, typename U::value_type>();
  else if constexpr (is_instance_v<U, std::pair>)
    return first_why_not<
      P, std::tuple<typename U::first_type, typename U::second_type>>(
      "element");
  else if constexpr (is_instance_v<U, std::tuple>)
    return first_why_not<P, U>("element");
  else if constexpr (is_instance_v<U, std::optional>)
    return P::optionals
             ? "value: " + why_not<P, typename U::value_type>()
             : std::string{P::name} + " cannot express std::optional";
  else if constexpr (is_instance_v<U, std::variant>)
    return P::variants ? first_why_not<P, variant_tuple<U>>("alternative")
                       : std::string{P::name} + " cannot express std::variant";
  else if constexpr (is_smart_ptr_v<U>)
    return P::template pointer<U>()
             ? "pointee: " + why_not<P, typename U::element_type>()
             : std::string{P::name} + " cannot express " + type_label<U>() +
                 " (no pointers, no shared identity)";
  else if constexpr (is_reflectable_v<U>)
    return first_why_not<P, field_types<U>>("member");
  else
    return type_label<U>() + " has no " + P::how;
}

} // namespace ferry::serializers::detail
