// Bounds-checked cereal input archives reading cereal's exact binary and
// portable-binary formats, plus ferry's cereal glue. Not API.
//
// cereal's own input archives resize a container to the size a frame claims
// before reading a single element, so four hostile bytes can demand 2^60
// elements. `checked_input_archive` reads the same bytes as
// `cereal::BinaryInputArchive` (Portable = false) or
// `cereal::PortableBinaryInputArchive` (Portable = true, default options), and
// in addition:
//  - checks every size tag against the bytes left (a container of N elements
//    needs at least N bytes; element types that encode to zero bytes are
//    therefore limited to as many elements as bytes remain),
//  - charges every container pre-allocation (vector, deque, list,
//    forward_list) to the call's allocation budget before it happens,
//  - bounds the nesting depth (recursive types such as trees),
//  - refuses bool bytes other than 0 and 1,
//  - checks that a shared pointer id refers to an object of the same type
//    (cereal itself casts blindly),
//  - refuses a std::map, std::set or their unordered forms that hold a key
//    twice (cereal keeps the first).
// The last two hold for ferry's reader of cereal's JSON format as well
// (detail/cereal_json_archive.hpp). Faults throw `decode_fault`, caught by
// the family adapter.
#pragma once

#include "ferry/serializers/detail/cereal_json_archive.hpp"
#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/detail/exact.hpp"
#include "ferry/serializers/detail/fresh_memory.hpp"
#include "ferry/serializers/detail/scope.hpp"
#include "ferry/serializers/detail/type_traits.hpp"
#include "ferry/serializers/reflect.hpp"

#include <cereal/archives/binary.hpp>
#include <cereal/archives/json.hpp>
#include <cereal/archives/portable_binary.hpp>
#include <cereal/cereal.hpp>
#include <cereal/types/array.hpp>
#include <cereal/types/bitset.hpp>
#include <cereal/types/chrono.hpp>
#include <cereal/types/complex.hpp>
#include <cereal/types/deque.hpp>
#include <cereal/types/forward_list.hpp>
#include <cereal/types/list.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/memory.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/set.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/tuple.hpp>
#include <cereal/types/unordered_map.hpp>
#include <cereal/types/unordered_set.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/variant.hpp>
#include <cereal/types/vector.hpp>

#include <bit>
#include <cstring>
#include <span>
#include <string_view>
#include <typeindex>

namespace ferry::serializers::detail {

template <bool Portable>
class checked_input_archive
  : public cereal::InputArchive<checked_input_archive<Portable>,
                                cereal::AllowEmptyClassElision> {
public:
  using super = cereal::InputArchive<checked_input_archive<Portable>,
                                     cereal::AllowEmptyClassElision>;

  checked_input_archive(std::span<const std::byte> in, uint32_t max_depth)
    : super(this),
      in_(in),
      max_depth_(max_depth) {
    if constexpr (Portable) {
      uint8_t stream_little = 0;
      load_bytes(&stream_little, 1);
      uint8_t machine_little = std::endian::native == std::endian::little;
      swap_ = (machine_little ^ stream_little) != 0;
    }
  }

  /// Reads `n` bytes; elements of `DataSize` bytes are byte-swapped when the
  /// portable stream's endianness differs from the machine's.
  template <size_t DataSize>
  void load_data(void* data, size_t n) {
    load_bytes(data, n);
    if constexpr (Portable && DataSize > 1) {
      if (swap_) {
        auto p = static_cast<uint8_t*>(data);
        for (size_t i = 0; i + DataSize <= n; i += DataSize)
          for (size_t j = 0; j < DataSize / 2; ++j)
            std::swap(p[i + j], p[i + DataSize - 1 - j]);
      }
    }
  }

  void load_bytes(void* data, size_t n) {
    need(n);
    if (n > 0)
      std::memcpy(data, in_.data() + pos_, n);
    pos_ += n;
  }

  /// Passes over `n` bytes.
  void skip_bytes(uint64_t n) {
    need(n);
    pos_ += static_cast<size_t>(n);
  }

  /// Fills `xs` with `n` elements straight from the input when the bytes are
  /// aligned for T and need no byte swap (no zero-fill before the copy);
  /// returns false otherwise.
  template <class T, class A>
  bool try_assign(std::vector<T, A>& xs, size_t n) {
    if (n > remaining() / sizeof(T))
      return false;
    auto p = in_.data() + pos_;
    if (swap_ || reinterpret_cast<uintptr_t>(p) % alignof(T) != 0)
      return false;
    auto first = reinterpret_cast<const T*>(p);
    assign_fresh(xs, first, n);
    pos_ += n * sizeof(T);
    return true;
  }

  void check_size(uint64_t n) const {
    if (n > remaining())
      throw decode_fault{errc::length_out_of_range,
                         "a size tag claims " + std::to_string(n) +
                           " elements but only " + std::to_string(remaining()) +
                           " bytes remain (each element needs at least "
                           "one byte)"};
  }

  void enter() {
    if (++depth_ > max_depth_)
      throw decode_fault{errc::nesting_too_deep,
                         "nests deeper than limits::max_depth (" +
                           std::to_string(max_depth_) + ")"};
  }

  void leave() noexcept { --depth_; }

  size_t remaining() const noexcept { return in_.size() - pos_; }

  size_t position() const noexcept { return pos_; }

  /// Starts reading by a writer's shape (detail/cereal_resolve.hpp): from
  /// here on, `shape_step` may run 8 times per remaining byte plus
  /// `shape_walk_slack` times; a shape whose walk takes more is hostile.
  void begin_shape_walk() noexcept {
    steps_left_ = 8 * static_cast<uint64_t>(remaining()) + shape_walk_slack;
  }

  /// Counts one step of a walk by a writer's shape.
  void shape_step() {
    if (steps_left_ == 0)
      throw decode_fault{errc::length_out_of_range,
                         "reading by the sender's shape takes more than 8 "
                         "steps per byte (values without bytes, repeated); "
                         "the sender's shape or bytes are hostile"};
    --steps_left_;
  }

  static constexpr uint64_t shape_walk_slack = uint64_t{1} << 17;

  /// Whether a portable stream's elements are byte-swapped on this machine.
  bool swapped() const noexcept { return swap_; }

private:
  void need(uint64_t n) const {
    if (n > remaining())
      throw decode_fault{errc::truncated_frame,
                         "needs " + std::to_string(n) + " bytes but only " +
                           std::to_string(remaining()) + " remain"};
  }

  std::span<const std::byte> in_;
  size_t pos_ = 0;
  uint32_t depth_ = 0;
  uint32_t max_depth_;
  uint64_t steps_left_ = 0;
  bool swap_ = false;
};

using checked_binary_archive = checked_input_archive<false>;
using checked_portable_archive = checked_input_archive<true>;

template <bool P, class T>
requires std::is_arithmetic_v<T>
void CEREAL_LOAD_FUNCTION_NAME(checked_input_archive<P>& ar, T& t) {
  if constexpr (std::is_same_v<T, bool>) {
    uint8_t b = 0;
    ar.template load_data<1>(&b, 1);
    if (b > 1)
      throw decode_fault{errc::malformed_frame,
                         "a bool holds the byte " + std::to_string(b)};
    t = b != 0;
  } else {
    ar.template load_data<sizeof(T)>(std::addressof(t), sizeof(T));
  }
}

template <bool P, class T>
void CEREAL_SERIALIZE_FUNCTION_NAME(checked_input_archive<P>& ar,
                                    cereal::NameValuePair<T>& t) {
  ar(t.value);
}

template <bool P, class T>
void CEREAL_SERIALIZE_FUNCTION_NAME(checked_input_archive<P>& ar,
                                    cereal::SizeTag<T>& t) {
  ar(t.size);
  ar.check_size(static_cast<uint64_t>(t.size));
}

template <bool P, class T>
void CEREAL_LOAD_FUNCTION_NAME(checked_input_archive<P>& ar,
                               cereal::BinaryData<T>& bd) {
  using element = std::remove_cv_t<std::remove_pointer_t<T>>;
  constexpr size_t data_size = std::is_void_v<element> ? 1 : sizeof(element);
  ar.template load_data<data_size>(bd.data, static_cast<size_t>(bd.size));
}

template <bool P, class T>
void prologue(checked_input_archive<P>& ar, const T&) {
  ar.enter();
}

template <bool P, class T>
void epilogue(checked_input_archive<P>& ar, const T&) {
  ar.leave();
}

// Containers that cereal resizes before reading: charge the budget first.

/// Reads a size tag (checked against the bytes left) and charges the budget
/// for that many elements of `element_bytes` each; returns the size.
template <bool P>
size_t load_charged_size(checked_input_archive<P>& ar, uint64_t element_bytes,
                         std::string_view what) {
  cereal::size_type n = 0;
  ar(cereal::make_size_tag(n));
  charge(n, element_bytes, what);
  return static_cast<size_t>(n);
}

/// Reads a sequence that cereal resizes before reading its elements, as
/// cereal does, after `load_charged_size`.
template <bool P, class C>
void load_resized(checked_input_archive<P>& ar, C& xs, uint64_t element_bytes,
                  std::string_view what) {
  xs.resize(load_charged_size(ar, element_bytes, what));
  for (auto& x : xs)
    ar(x);
}

template <bool P, class T, class A>
void CEREAL_LOAD_FUNCTION_NAME(checked_input_archive<P>& ar,
                               std::vector<T, A>& xs) {
  if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::byte>) {
    auto n = load_charged_size(ar, sizeof(T), "a std::vector");
    if (ar.try_assign(xs, n))
      return;
    xs.resize(n);
    ar(cereal::binary_data(xs.data(), n * sizeof(T)));
  } else {
    load_resized(ar, xs, sizeof(T), "a std::vector");
  }
}

template <bool P, class A>
void CEREAL_LOAD_FUNCTION_NAME(checked_input_archive<P>& ar,
                               std::vector<bool, A>& xs) {
  xs.resize(load_charged_size(ar, 1, "a std::vector<bool>"));
  for (size_t i = 0; i < xs.size(); ++i) {
    bool b = false;
    ar(b);
    xs[i] = b;
  }
}

template <bool P, class T, class A>
void CEREAL_LOAD_FUNCTION_NAME(checked_input_archive<P>& ar,
                               std::deque<T, A>& xs) {
  load_resized(ar, xs, sizeof(T), "a std::deque");
}

template <bool P, class T, class A>
void CEREAL_LOAD_FUNCTION_NAME(checked_input_archive<P>& ar,
                               std::list<T, A>& xs) {
  load_resized(ar, xs, sizeof(T) + 2 * sizeof(void*), "a std::list");
}

template <bool P, class T, class A>
void CEREAL_LOAD_FUNCTION_NAME(checked_input_archive<P>& ar,
                               std::forward_list<T, A>& xs) {
  load_resized(ar, xs, sizeof(T) + sizeof(void*), "a std::forward_list");
}

/// Loads a shared pointer in cereal's format, checking that references name
/// objects of the same type.
template <class Archive, class T>
void load_shared(Archive& ar, std::shared_ptr<T>& out) {
  using value_type = std::remove_const_t<T>;
  uint32_t id = 0;
  ar(cereal::make_nvp("id", id));
  auto scope = current_scope();
  if (id & cereal::detail::msb_32bit) {
    auto stripped = id & ~cereal::detail::msb_32bit;
    if (scope != nullptr) {
      auto [i, added] =
        scope->shared_types.emplace(stripped, typeid(value_type));
      if (!added)
        throw decode_fault{errc::malformed_frame, "shared pointer id " +
                                                    std::to_string(stripped) +
                                                    " is defined twice"};
    }
    std::shared_ptr<value_type> ptr{cereal::access::construct<value_type>()};
    ar.registerSharedPointer(id, ptr);
    ar(cereal::make_nvp("data", *ptr));
    out = std::move(ptr);
  } else if (id == 0) {
    out.reset();
  } else {
    if (scope != nullptr) {
      auto i = scope->shared_types.find(id);
      if (i == scope->shared_types.end())
        throw decode_fault{errc::malformed_frame,
                           "shared pointer id " + std::to_string(id) +
                             " refers to no object decoded before"};
      if (i->second != std::type_index{typeid(value_type)})
        throw decode_fault{errc::malformed_frame,
                           "shared pointer id " + std::to_string(id) +
                             " refers to an object of another type than " +
                             demangle(typeid(value_type))};
    }
    out = std::static_pointer_cast<T>(ar.getSharedPointer(id));
  }
}

template <bool P, class T>
requires(!std::is_polymorphic_v<T>) void CEREAL_LOAD_FUNCTION_NAME(
  checked_input_archive<P>& ar,
  cereal::memory_detail::PtrWrapper<std::shared_ptr<T>&>& wrapper) {
  load_shared(ar, wrapper.ptr);
}

/// ferry's own cereal input archives.
template <class Archive>
concept ferry_input_archive = std::is_same_v<Archive, checked_binary_archive> ||
  std::is_same_v<Archive, checked_portable_archive> ||
  std::is_same_v<Archive, checked_json_archive>;

/// cereal's loading of a map (key-value items) or a set, refusing a key
/// given twice.
template <class Archive, class C>
void load_unique(Archive& ar, C& xs) {
  cereal::size_type n = 0;
  ar(cereal::make_size_tag(n));
  xs.clear();
  for (size_t i = 0; i < n; ++i) {
    typename C::key_type key;
    if constexpr (requires { typename C::mapped_type; }) {
      typename C::mapped_type value;
      ar(cereal::make_map_item(key, value));
      insert_unique(xs,
                    typename C::value_type{std::move(key), std::move(value)}, i,
                    "a map");
    } else {
      ar(key);
      insert_unique(xs, std::move(key), i, "a set");
    }
  }
}

template <class Archive, class K, class V, class C, class A>
requires ferry_input_archive<Archive>
void CEREAL_LOAD_FUNCTION_NAME(Archive& ar, std::map<K, V, C, A>& xs) {
  load_unique(ar, xs);
}

template <class Archive, class K, class V, class H, class E, class A>
requires ferry_input_archive<Archive>
void CEREAL_LOAD_FUNCTION_NAME(Archive& ar,
                               std::unordered_map<K, V, H, E, A>& xs) {
  load_unique(ar, xs);
}

template <class Archive, class K, class C, class A>
requires ferry_input_archive<Archive>
void CEREAL_LOAD_FUNCTION_NAME(Archive& ar, std::set<K, C, A>& xs) {
  load_unique(ar, xs);
}

template <class Archive, class K, class H, class E, class A>
requires ferry_input_archive<Archive>
void CEREAL_LOAD_FUNCTION_NAME(Archive& ar,
                               std::unordered_set<K, H, E, A>& xs) {
  load_unique(ar, xs);
}

template <class T>
requires(!std::is_polymorphic_v<T>) void CEREAL_LOAD_FUNCTION_NAME(
  checked_json_archive& ar,
  cereal::memory_detail::PtrWrapper<std::shared_ptr<T>&>& wrapper) {
  load_shared(ar, wrapper.ptr);
}

template <class Archive>
concept cereal_archive =
  std::is_base_of_v<cereal::detail::OutputArchiveBase, Archive> ||
  std::is_base_of_v<cereal::detail::InputArchiveBase, Archive>;

struct cereal_policy;

} // namespace ferry::serializers::detail

namespace cereal::traits::detail {

template <>
struct get_output_from_input<
  ferry::serializers::detail::checked_binary_archive> {
  using type = cereal::BinaryOutputArchive;
};

template <>
struct get_output_from_input<
  ferry::serializers::detail::checked_portable_archive> {
  using type = cereal::PortableBinaryOutputArchive;
};

} // namespace cereal::traits::detail
