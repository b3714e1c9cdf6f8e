// Actor handles in the cereal families (actor_handles.hpp). Not API.
//
// Gives `caf::actor`, `caf::actor_addr`, `caf::strong_actor_ptr` and
// `caf::typed_actor<...>` a cereal save and load, in namespace cereal, which
// cereal finds through the archive type wherever the handle sits (top level,
// aggregate members, containers, std::optional, std::variant, and members of
// user types that call `ar(handle)` in their own serialize). Included by
// families/cereal.hpp: users include nothing.
//
// Wire form: the binary formats write the token's kind as a u8 then its id
// as a u64 (the portable format in its byte order); cereal.json writes an
// object `{"kind": n, "id": n}`. Decoding refuses a JSON kind above 255 and
// kind 0 with an id; failures unwind as `decode_fault` / `error_fault`, which
// the family's `guarded` turns into error values.
//
// Thread-safety: stateless apart from the calling thread's hook.
#pragma once

#include "ferry/serializers/detail/actor_handles.hpp"
#include "ferry/serializers/detail/cereal_archive.hpp"

#include <cereal/archives/json.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace ferry::serializers::detail {

template <class Archive>
inline constexpr bool cereal_json_archive =
  std::is_same_v<Archive, cereal::JSONOutputArchive> ||
  std::is_same_v<Archive, cereal::JSONInputArchive> ||
  std::is_same_v<Archive, checked_json_archive>;

template <class Archive, class T>
void cereal_save_handle(Archive& ar, const T& x) {
  auto token = token_or_throw(to_strong(x), typeid(T));
  if constexpr (cereal_json_archive<Archive>)
    ar(cereal::make_nvp("kind", uint32_t{token.kind}),
       cereal::make_nvp("id", token.id));
  else
    ar(token.kind, token.id);
}

template <class Archive, class T>
void cereal_load_handle(Archive& ar, T& x) {
  handle_token token;
  if constexpr (cereal_json_archive<Archive>) {
    // Read wider than a u8: cereal would cut a larger number silently.
    uint64_t kind = 0;
    ar(cereal::make_nvp("kind", kind), cereal::make_nvp("id", token.id));
    if (kind > UINT8_MAX)
      throw decode_fault{errc::malformed_frame, "an actor handle's kind is " +
                                                  std::to_string(kind) +
                                                  ", more than a byte holds"};
    token.kind = static_cast<uint8_t>(kind);
  } else {
    ar(token.kind, token.id);
  }
  x = from_strong<T>(handle_or_throw(token, typeid(T)));
}

} // namespace ferry::serializers::detail

namespace cereal {

/// Writes an actor handle as its token (see above).
template <class Archive, class T>
requires ferry::serializers::detail::cereal_archive<Archive> &&
  ferry::serializers::detail::is_actor_handle_v<T>
void CEREAL_SAVE_FUNCTION_NAME(Archive& ar, const T& x) {
  ferry::serializers::detail::cereal_save_handle(ar, x);
}

/// Reads an actor handle from its token (see above).
template <class Archive, class T>
requires ferry::serializers::detail::cereal_archive<Archive> &&
  ferry::serializers::detail::is_actor_handle_v<T>
void CEREAL_LOAD_FUNCTION_NAME(Archive& ar, T& x) {
  ferry::serializers::detail::cereal_load_handle(ar, x);
}

} // namespace cereal
