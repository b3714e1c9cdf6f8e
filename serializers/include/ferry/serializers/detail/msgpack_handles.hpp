// Actor handles in the msgpack family (actor_handles.hpp). Not API.
//
// msgpack-cxx adaptors (`pack`, `convert`) for `caf::actor`,
// `caf::actor_addr`, `caf::strong_actor_ptr` and `caf::typed_actor<...>`,
// and the `msgpack_adaptor` trait that tells ferry's capability check the
// family expresses them, wherever they sit (top level, aggregate members,
// containers, std::optional, and members of user types with MSGPACK_DEFINE).
// Included by families/msgpack.hpp: users include nothing.
//
// Wire form: an array `[kind, id]` of two non-negative integers. Decoding
// refuses anything else (another shape, a negative number, a kind above
// 255, kind 0 with an id) by throwing `decode_fault`; the hook's errors
// unwind as `error_fault`; the family's `guarded` turns both into error
// values.
//
// Thread-safety: stateless apart from the calling thread's hook.
#pragma once

#include "ferry/serializers/detail/actor_handles.hpp"

#include <msgpack.hpp>

#include <cstdint>
#include <string>

namespace ferry::serializers {

template <>
struct msgpack_adaptor<caf::actor> : std::true_type {};

template <>
struct msgpack_adaptor<caf::actor_addr> : std::true_type {};

template <>
struct msgpack_adaptor<caf::strong_actor_ptr> : std::true_type {};

template <class... Sigs>
struct msgpack_adaptor<caf::typed_actor<Sigs...>> : std::true_type {};

} // namespace ferry::serializers

namespace ferry::serializers::detail {

/// Returns the token an msgpack object holds; throws `decode_fault` for
/// anything but `[kind, id]` (see above).
handle_token msgpack_token(const msgpack::object& o);

} // namespace ferry::serializers::detail

namespace msgpack {
MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS) {
  namespace adaptor {

  /// Packs an actor handle as `[kind, id]`.
  template <class T>
  struct pack<
    T, std::enable_if_t<ferry::serializers::detail::is_actor_handle_v<T>>> {
    template <class Stream>
    packer<Stream>& operator()(packer<Stream>& o, const T& x) const {
      namespace fd = ferry::serializers::detail;
      auto token = fd::token_or_throw(fd::to_strong(x), typeid(T));
      o.pack_array(2);
      o.pack(token.kind);
      o.pack(token.id);
      return o;
    }
  };

  /// Converts `[kind, id]` back into an actor handle.
  template <class T>
  struct convert<
    T, std::enable_if_t<ferry::serializers::detail::is_actor_handle_v<T>>> {
    const msgpack::object& operator()(const msgpack::object& o, T& x) const {
      namespace fd = ferry::serializers::detail;
      x = fd::from_strong<T>(
        fd::handle_or_throw(fd::msgpack_token(o), typeid(T)));
      return o;
    }
  };

  } // namespace adaptor
} // MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS)
} // namespace msgpack
