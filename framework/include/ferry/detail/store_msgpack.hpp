// The store's handles in the msgpack family.
//
// `object_ref`, `shared_array<T>` and `parked_ref` travel in every family
// that can carry a struct: cereal and caf through the store's own `save` /
// `load` / `inspect`, msgpack through these adaptors. They live in the
// framework because the store and the serializers do not know each other;
// node_config.hpp includes this header, so users include nothing.
//
// Wire form: a handle is an array `[store, object, ticket]` of three
// unsigned integers (the store's `ref_wire`); a `shared_array<T>` and a
// `parked_ref` are their object's handle. Decoding refuses another shape
// (msgpack's `type_error`), and the store's refusals (a foreign store, a
// ticket it does not know) unwind as `ref_serialization_error`, which the
// registry returns as the store's error.
//
// Thread-safety: stateless.
#pragma once

#include "ferry/serializers/detail/type_traits.hpp"

#include "ferry/store/object_ref.hpp"
#include "ferry/store/parked_ref.hpp"
#include "ferry/store/shared_array.hpp"

#include <msgpack.hpp>

#include <type_traits>

namespace ferry::serializers {

template <>
struct msgpack_adaptor<store::object_ref> : std::true_type {};

template <class T>
struct msgpack_adaptor<store::shared_array<T>> : std::true_type {};

template <>
struct msgpack_adaptor<store::parked_ref> : std::true_type {};

} // namespace ferry::serializers

namespace msgpack {
MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS) {
  namespace adaptor {

  /// Packs a handle as `[store, object, ticket]`.
  template <>
  struct pack<ferry::store::object_ref> {
    template <class Stream>
    packer<Stream>& operator()(packer<Stream>& o,
                               const ferry::store::object_ref& x) const {
      auto wire = to_wire(x);
      if (!wire)
        throw ferry::store::ref_serialization_error{std::move(wire.error())};
      o.pack_array(3);
      o.pack(wire->store);
      o.pack(wire->object);
      o.pack(wire->ticket);
      return o;
    }
  };

  /// Reads `[store, object, ticket]` back into a handle.
  template <>
  struct convert<ferry::store::object_ref> {
    const msgpack::object& operator()(const msgpack::object& o,
                                      ferry::store::object_ref& x) const {
      if (o.type != msgpack::type::ARRAY || o.via.array.size != 3)
        throw msgpack::type_error{};
      ferry::store::ref_wire wire;
      wire.store = o.via.array.ptr[0].as<uint64_t>();
      wire.object = o.via.array.ptr[1].as<uint64_t>();
      wire.ticket = o.via.array.ptr[2].as<uint64_t>();
      auto ref = from_wire(wire);
      if (!ref)
        throw ferry::store::ref_serialization_error{std::move(ref.error())};
      x = std::move(*ref);
      return o;
    }
  };

  /// Packs an array as its object's handle.
  template <class T>
  struct pack<ferry::store::shared_array<T>> {
    template <class Stream>
    packer<Stream>& operator()(packer<Stream>& o,
                               const ferry::store::shared_array<T>& x) const {
      return o.pack(x.ref());
    }
  };

  /// Reads an array from its object's handle.
  template <class T>
  struct convert<ferry::store::shared_array<T>> {
    const msgpack::object& operator()(const msgpack::object& o,
                                      ferry::store::shared_array<T>& x) const {
      ferry::store::object_ref ref;
      o.convert(ref);
      auto arr = ferry::store::shared_array<T>::from_ref(std::move(ref));
      if (!arr)
        throw ferry::store::ref_serialization_error{std::move(arr.error())};
      x = std::move(*arr);
      return o;
    }
  };

  /// Packs a parked reference as its object's handle.
  template <>
  struct pack<ferry::store::parked_ref> {
    template <class Stream>
    packer<Stream>& operator()(packer<Stream>& o,
                               const ferry::store::parked_ref& x) const {
      auto ref = x.handle();
      if (!ref)
        throw ferry::store::ref_serialization_error{std::move(ref.error())};
      return o.pack(*ref);
    }
  };

  /// Reads a parked reference from its object's handle.
  template <>
  struct convert<ferry::store::parked_ref> {
    const msgpack::object& operator()(const msgpack::object& o,
                                      ferry::store::parked_ref& x) const {
      ferry::store::object_ref ref;
      o.convert(ref);
      auto parked = ferry::store::parked_ref::from_handle(ref);
      if (!parked)
        throw ferry::store::ref_serialization_error{std::move(parked.error())};
      x = std::move(*parked);
      return o;
    }
  };

  } // namespace adaptor
} // MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS)
} // namespace msgpack
