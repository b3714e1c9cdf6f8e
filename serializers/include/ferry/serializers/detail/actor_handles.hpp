// What the families share to carry actor handles (actor_handles.hpp). Not API.
//
// Owns the classification of handle types (`is_actor_handle_v`,
// `holds_actor_handle`), the conversions between a handle and
// `caf::strong_actor_ptr`, and the one place that applies the token rules
// (null handles, the missing hook, kind 0 with an id, the hook's errors):
// `token_of` and `handle_of` return error values (the caf family's
// inspectors), `token_or_throw` and `handle_or_throw` throw them as
// `decode_fault` / `error_fault` for the families whose library unwinds
// (cereal, msgpack), caught by `guarded`. Every failure also counts in
// `handle_failures()`, so that the registry stops at a failed handle instead
// of trying the next family (which would ask the same hook).
//
// Thread-safety: the hook and the failure count are per thread; everything
// else is stateless.
#pragma once

#include "ferry/serializers/actor_handles.hpp"
#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/detail/type_traits.hpp"

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/actor_cast.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <string>

namespace ferry::serializers::detail {

template <class T>
struct is_typed_actor : std::false_type {};

template <class... Sigs>
struct is_typed_actor<caf::typed_actor<Sigs...>> : std::true_type {};

/// True for the actor handle types the families carry as tokens.
template <class T>
inline constexpr bool is_actor_handle_v =
  std::is_same_v<T, caf::actor> || std::is_same_v<T, caf::actor_addr> ||
  std::is_same_v<T, caf::strong_actor_ptr> || is_typed_actor<T>::value;

template <class T>
constexpr bool holds_actor_handle();

template <class Tuple, size_t... Is>
constexpr bool any_holds_actor_handle(std::index_sequence<Is...>) {
  return (holds_actor_handle<std::tuple_element_t<Is, Tuple>>() || ...);
}

/// Whether T is or holds an actor handle in standard containers, optionals,
/// pairs, tuples, arrays or plain aggregates with no serialization of their
/// own (recursive types have their own; for the refusals' texts).
template <class T>
constexpr bool holds_actor_handle() {
  using U = std::remove_cv_t<T>;
  if constexpr (is_actor_handle_v<U>)
    return true;
  else if constexpr (is_sequence_v<U> || is_std_array<U>::value ||
                     is_instance_v<U, std::optional>)
    return holds_actor_handle<typename U::value_type>();
  else if constexpr (is_map_v<U>)
    return holds_actor_handle<typename U::key_type>() ||
           holds_actor_handle<typename U::mapped_type>();
  else if constexpr (is_instance_v<U, std::pair>)
    return holds_actor_handle<typename U::first_type>() ||
           holds_actor_handle<typename U::second_type>();
  else if constexpr (is_instance_v<U, std::tuple>)
    return any_holds_actor_handle<U>(
      std::make_index_sequence<std::tuple_size_v<U>>{});
  else if constexpr (is_reflectable_v<U> && !has_own_any<U>)
    return any_holds_actor_handle<field_types<U>>(
      std::make_index_sequence<std::tuple_size_v<field_types<U>>>{});
  else
    return false;
}

/// Returns `x` as the pointer the hook sees.
template <class T>
caf::strong_actor_ptr to_strong(const T& x) {
  if constexpr (std::is_same_v<T, caf::strong_actor_ptr>)
    return x;
  else
    return caf::actor_cast<caf::strong_actor_ptr>(x);
}

/// Returns `x` as a T.
template <class T>
T from_strong(caf::strong_actor_ptr x) {
  if constexpr (std::is_same_v<T, caf::strong_actor_ptr>)
    return x;
  else
    return caf::actor_cast<T>(std::move(x));
}

/// Returns the token for `x`, of the handle type `what`: {0, 0} for null,
/// else the hook's; an error without a hook or from the hook.
[[nodiscard]] caf::expected<handle_token>
token_of(const caf::strong_actor_ptr& x, const std::type_info& what);

/// Returns the handle for the token `x` read for the handle type `what`:
/// null for {0, 0}, else the hook's; an error for kind 0 with an id, without
/// a hook, or from the hook.
[[nodiscard]] caf::expected<caf::strong_actor_ptr>
handle_of(const handle_token& x, const std::type_info& what);

/// `token_of`, throwing its error (see the file comment).
handle_token token_or_throw(const caf::strong_actor_ptr& x,
                            const std::type_info& what);

/// `handle_of`, throwing its error (see the file comment).
caf::strong_actor_ptr handle_or_throw(const handle_token& x,
                                      const std::type_info& what);

/// Returns how many handles failed to translate on this thread so far.
[[nodiscard]] uint64_t handle_failures() noexcept;

} // namespace ferry::serializers::detail
