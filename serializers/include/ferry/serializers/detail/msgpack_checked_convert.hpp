// The msgpack family's checked conversions: what msgpack-cxx converts into
// differently when ferry reads a frame (families/msgpack.hpp).
//
// - An array into a std::vector, std::deque, std::list or
//   std::forward_list first charges the decode call's allocation budget for
//   the container msgpack-cxx is about to size to the array's length (an
//   array of nils costs one byte per element on the wire, an element of the
//   container may take kilobytes); a spent budget throws `decode_fault`.
// - A map into a std::map or std::unordered_map, and an array into a
//   std::set or std::unordered_set, refuse a key given twice
//   (`errc::duplicate_key`).
// - A double, float or std::string converts exactly (defined in
//   serializers/src/families/msgpack.cpp; the rules are at the top of
//   families/msgpack.hpp).
// - A map where ferry writes an array (a sequence, set, std::array, pair,
//   tuple or plain aggregate) or a bin (a byte vector or array), and an
//   array where it writes a map or a bin, are refused
//   (`errc::member_mismatch`, `require_kind`) instead of msgpack-cxx's
//   type_error, which names neither.
//
// These replace msgpack-cxx's own conversions in its default API namespace,
// so a translation unit that converts msgpack objects into these types
// includes this header (through families/msgpack.hpp) before it does.
// Stateless: the charges go to the calling thread's decode scope, so they
// run on any thread.
#pragma once

#include "ferry/serializers/detail/exact.hpp"
#include "ferry/serializers/detail/scope.hpp"
#include "ferry/serializers/detail/type_traits.hpp"

#include <msgpack.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <forward_list>
#include <list>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace ferry::serializers::detail {

/// Whether msgpack-cxx writes a std::vector or std::array of `E` as bin.
template <class E>
inline constexpr bool msgpack_bin_element =
  std::is_same_v<E, char> || std::is_same_v<E, unsigned char> ||
  std::is_same_v<E, std::byte>;

/// Throws `decode_fault{errc::member_mismatch}` for `o`, an array or map
/// where the type read, `type`, is written as `want` (see `require_kind`).
[[noreturn]] void refuse_container(const msgpack::object& o,
                                   msgpack::type::object_type want,
                                   const std::string& type);

/// Refuses `o` when it is an array or a map and ferry writes a `C` as
/// another kind, `want` (an array, a map or a bin). Other kinds are left to
/// the conversion, which throws msgpack::type_error for them.
template <class C>
void require_kind(const msgpack::object& o, msgpack::type::object_type want) {
  if ((o.type == msgpack::type::ARRAY || o.type == msgpack::type::MAP) &&
      o.type != want)
    refuse_container(o, want, type_label<C>());
}

/// msgpack-cxx's conversion into `C`, which ferry writes as `Want`,
/// preceded by `require_kind`.
template <class C, msgpack::type::object_type Want>
struct kind_checked_convert {
  const msgpack::object& operator()(const msgpack::object& o, C& x) const {
    require_kind<C>(o, Want);
    return msgpack::v2::adaptor::convert<C>{}(o, x);
  }
};

/// msgpack-cxx's conversion of an array into container `C`, which resizes
/// `C` to the array's length before converting a single element, preceded
/// by charging `ElementBytes` per element to the decode call's allocation
/// budget (`charge`). Throws `decode_fault` when the budget is spent.
template <class C, size_t ElementBytes>
struct charged_convert {
  const msgpack::object& operator()(const msgpack::object& o, C& x) const {
    using E = typename C::value_type;
    constexpr bool bin =
      is_instance_v<C, std::vector> && msgpack_bin_element<E>;
    require_kind<C>(o, bin ? msgpack::type::BIN : msgpack::type::ARRAY);
    // Anything else (a bin or str into std::vector<char>, bounded by the
    // frame; a type error) is msgpack-cxx's to handle.
    if (o.type == msgpack::type::ARRAY)
      charge(o.via.array.size, ElementBytes, container_name());
    // msgpack-cxx's own conversion for C (the version 1 adaptor that the
    // default API version inherits).
    return msgpack::v2::adaptor::convert<C>{}(o, x);
  }

  static const char* container_name() {
    if constexpr (is_instance_v<C, std::vector>)
      return "a std::vector";
    else if constexpr (is_instance_v<C, std::deque>)
      return "a std::deque";
    else if constexpr (is_instance_v<C, std::list>)
      return "a std::list";
    else
      return "a std::forward_list";
  }
};

/// msgpack-cxx's conversion of a map into `M` (a std::map or
/// std::unordered_map), refusing a key given twice.
template <class M>
struct unique_map_convert {
  const msgpack::object& operator()(const msgpack::object& o, M& x) const {
    require_kind<M>(o, msgpack::type::MAP);
    if (o.type != msgpack::type::MAP)
      throw msgpack::type_error();
    M tmp;
    for (uint32_t i = 0; i < o.via.map.size; ++i) {
      auto& kv = o.via.map.ptr[i];
      typename M::key_type key;
      typename M::mapped_type value;
      kv.key.convert(key);
      kv.val.convert(value);
      insert_unique(tmp,
                    typename M::value_type{std::move(key), std::move(value)}, i,
                    "a msgpack map");
    }
    x = std::move(tmp);
    return o;
  }
};

/// msgpack-cxx's conversion of an array into `S` (a std::set or
/// std::unordered_set), refusing an element given twice.
template <class S>
struct unique_set_convert {
  const msgpack::object& operator()(const msgpack::object& o, S& x) const {
    require_kind<S>(o, msgpack::type::ARRAY);
    if (o.type != msgpack::type::ARRAY)
      throw msgpack::type_error();
    S tmp;
    for (uint32_t i = 0; i < o.via.array.size; ++i) {
      typename S::value_type y;
      o.via.array.ptr[i].convert(y);
      insert_unique(tmp, std::move(y), i, "a msgpack array read into a set");
    }
    x = std::move(tmp);
    return o;
  }
};

} // namespace ferry::serializers::detail

namespace msgpack {
MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS) {
  namespace adaptor {

  /// Floating point and text, exactly (the rules are at the top of
  /// families/msgpack.hpp).
  template <>
  struct convert<double> {
    const msgpack::object& operator()(const msgpack::object& o,
                                      double& v) const;
  };

  template <>
  struct convert<float> {
    const msgpack::object& operator()(const msgpack::object& o, float& v) const;
  };

  template <>
  struct convert<std::string> {
    const msgpack::object& operator()(const msgpack::object& o,
                                      std::string& v) const;
  };

  /// Maps and sets with unique keys refuse a key given twice.
  template <class K, class V, class C, class A>
  struct convert<std::map<K, V, C, A>>
    : ferry::serializers::detail::unique_map_convert<std::map<K, V, C, A>> {};

  template <class K, class V, class H, class E, class A>
  struct convert<std::unordered_map<K, V, H, E, A>>
    : ferry::serializers::detail::unique_map_convert<
        std::unordered_map<K, V, H, E, A>> {};

  template <class T, class C, class A>
  struct convert<std::set<T, C, A>>
    : ferry::serializers::detail::unique_set_convert<std::set<T, C, A>> {};

  template <class T, class H, class E, class A>
  struct convert<std::unordered_set<T, H, E, A>>
    : ferry::serializers::detail::unique_set_convert<
        std::unordered_set<T, H, E, A>> {};

  /// The other containers: an array or map of the other kind is refused
  /// (see `require_kind`).
  template <class T, size_t N>
  struct convert<std::array<T, N>>
    : ferry::serializers::detail::kind_checked_convert<
        std::array<T, N>, ferry::serializers::detail::msgpack_bin_element<T>
                            ? msgpack::type::BIN
                            : msgpack::type::ARRAY> {};

  template <class A, class B>
  struct convert<std::pair<A, B>>
    : ferry::serializers::detail::kind_checked_convert<std::pair<A, B>,
                                                       msgpack::type::ARRAY> {};

  template <class... Ts>
  struct convert<std::tuple<Ts...>>
    : ferry::serializers::detail::kind_checked_convert<std::tuple<Ts...>,
                                                       msgpack::type::ARRAY> {};

  template <class T, class C, class A>
  struct convert<std::multiset<T, C, A>>
    : ferry::serializers::detail::kind_checked_convert<std::multiset<T, C, A>,
                                                       msgpack::type::ARRAY> {};

  template <class K, class V, class C, class A>
  struct convert<std::multimap<K, V, C, A>>
    : ferry::serializers::detail::kind_checked_convert<
        std::multimap<K, V, C, A>, msgpack::type::MAP> {};

  template <class K, class V, class H, class E, class A>
  struct convert<std::unordered_multimap<K, V, H, E, A>>
    : ferry::serializers::detail::kind_checked_convert<
        std::unordered_multimap<K, V, H, E, A>, msgpack::type::MAP> {};

  /// Converts arrays into the containers msgpack-cxx sizes before converting
  /// their elements (see `charged_convert`).
  template <class T, class A>
  struct convert<std::vector<T, A>>
    : ferry::serializers::detail::charged_convert<std::vector<T, A>,
                                                  sizeof(T)> {};

  template <class T, class A>
  struct convert<std::deque<T, A>>
    : ferry::serializers::detail::charged_convert<std::deque<T, A>, sizeof(T)> {
  };

  template <class T, class A>
  struct convert<std::list<T, A>>
    : ferry::serializers::detail::charged_convert<
        std::list<T, A>, sizeof(T) + 2 * sizeof(void*)> {};

  template <class T, class A>
  struct convert<std::forward_list<T, A>>
    : ferry::serializers::detail::charged_convert<std::forward_list<T, A>,
                                                  sizeof(T) + sizeof(void*)> {};

  } // namespace adaptor
} // MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS)
} // namespace msgpack
