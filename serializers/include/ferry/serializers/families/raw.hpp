// The `raw` family: plain bytes of plain values, no copy on encode.
//
// Encodes a value whose every byte pattern is valid (integers, floating point,
// std::byte, std::array and plain aggregates of those) or a contiguous array
// of such values (std::vector, std::basic_string, std::span, array_view). The
// frame is a *view* of the value's own memory: encoding makes no copy, and the
// payload is valid only while the value lives unchanged, unless
// `encode_options::keep_alive` holds it.
//
// Decoding into `std::span<const T>` or `array_view<T>` makes no copy either
// (the frame must be aligned for T, else `misaligned_frame`); decoding into a
// std::vector copies, or adopts the frame's bytes for std::vector<std::byte>
// from an rvalue payload. Single values copy `sizeof(T)` bytes.
//
// Not supported: actor handles (their bytes point into this process; other
// families carry them as tokens, see actor_handles.hpp), bool and enums (not
// every byte is a valid value, so hostile bytes would be undefined behaviour:
// use uint8_t / the underlying type), pointers, classes with private members
// (their invariants are unknown).
// The format is the machine's memory layout: peers must share endianness and
// type layout (same architecture and compiler ABI).
#pragma once

#include "ferry/serializers/array_view.hpp"
#include "ferry/serializers/detail/actor_handles.hpp"
#include "ferry/serializers/detail/capability.hpp"
#include "ferry/serializers/detail/codec_common.hpp"
#include "ferry/serializers/detail/take_elements.hpp"

#include <cstring>

namespace ferry::serializers::detail {

template <class T>
constexpr bool raw_safe();

template <class Tuple, size_t... Is>
constexpr bool raw_safe_all(std::index_sequence<Is...>) {
  return (raw_safe<std::tuple_element_t<Is, Tuple>>() && ...);
}

/// True for types whose every byte pattern is a valid value.
template <class T>
constexpr bool raw_safe() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool> || std::is_enum_v<U>)
    return std::is_same_v<U, std::byte>;
  else if constexpr (std::is_arithmetic_v<U>)
    return true;
  else if constexpr (is_std_array<U>::value)
    return raw_safe<typename U::value_type>();
  else if constexpr (is_reflectable_v<U> && std::is_trivially_copyable_v<U>)
    return raw_safe_all<field_types<U>>(
      std::make_index_sequence<std::tuple_size_v<field_types<U>>>{});
  else
    return false;
}

template <class T>
struct raw_array : std::false_type {};

template <class T, class A>
struct raw_array<std::vector<T, A>> : std::true_type {
  using element = T;
  static constexpr bool view = false;
};

template <class T, class Tr, class A>
struct raw_array<std::basic_string<T, Tr, A>> : std::true_type {
  using element = T;
  static constexpr bool view = false;
};

template <class T, size_t N>
struct raw_array<std::span<T, N>> : std::true_type {
  using element = std::remove_const_t<T>;
  static constexpr bool view = true;
};

template <class T>
struct raw_array<array_view<T>> : std::true_type {
  using element = T;
  static constexpr bool view = true;
};

/// Whether `raw` can encode T.
template <class T>
constexpr bool raw_can_encode() {
  if constexpr (raw_array<T>::value)
    return raw_safe<typename raw_array<T>::element>();
  else
    return raw_safe<T>();
}

/// Whether `raw` can decode into T (dynamic-extent spans of const only).
template <class T>
constexpr bool raw_can_decode() {
  if constexpr (is_span<T>::value)
    return std::is_const_v<typename T::element_type> &&
           T::extent == std::dynamic_extent && raw_can_encode<T>();
  else
    return raw_can_encode<T>();
}

template <class T>
std::string raw_why_not() {
  if constexpr (raw_can_encode<T>())
    return {};
  else if constexpr (holds_actor_handle<T>())
    return type_label<T>() +
           " holds an actor handle (caf::actor, caf::actor_addr, "
           "caf::strong_actor_ptr or caf::typed_actor), which raw cannot "
           "carry: a handle's bytes are a pointer into this process, "
           "meaningless elsewhere; handles travel as tokens in cereal.*, "
           "msgpack and caf";
  else
    return type_label<T>() +
           " is not raw: raw takes values whose every byte pattern is "
           "valid (integers, floating point, std::byte, std::array and "
           "plain aggregates of them; no bool, enum or pointer) and "
           "contiguous arrays of them";
}

template <class T>
caf::error raw_encode(const T& x, std::vector<frame>& frames,
                      const std::shared_ptr<const void>& keep_alive) {
  if constexpr (raw_array<T>::value) {
    using E = typename raw_array<T>::element;
    auto bytes = std::as_bytes(std::span<const E>{x.data(), x.size()});
    frames.push_back(frame::view(bytes, keep_alive));
  } else {
    auto bytes = std::as_bytes(std::span<const T>{&x, 1});
    frames.push_back(frame::view(bytes, keep_alive));
  }
  return {};
}

template <class T>
caf::error raw_decode(std::span<const frame> frames, frame* adopt, T& out,
                      const call_info& info) {
  if (frames.size() != 1)
    return make_error(errc::frame_mismatch,
                      describe(info) +
                        ": raw payloads have exactly one frame, "
                        "this one has " +
                        std::to_string(frames.size()));
  // Like every decoder, inside guarded: copying the frame into a container
  // may fail to allocate.
  return guarded(
    info,
    [&]() -> caf::error {
      auto bytes = frames[0].bytes();
      if constexpr (raw_array<T>::value) {
        using E = typename raw_array<T>::element;
        if (bytes.size() % sizeof(E) != 0)
          return make_error(errc::malformed_frame,
                            describe(info) +
                              " (frame 0): " + std::to_string(bytes.size()) +
                              " bytes are not a whole number of " +
                              std::to_string(sizeof(E)) + "-byte elements");
        auto n = bytes.size() / sizeof(E);
        auto aligned =
          reinterpret_cast<uintptr_t>(bytes.data()) % alignof(E) == 0;
        if constexpr (raw_array<T>::view) {
          if (!aligned && n > 0)
            return make_error(errc::misaligned_frame,
                              describe(info) +
                                " (frame 0): the frame's memory is not "
                                "aligned to " +
                                std::to_string(alignof(E)) +
                                " bytes; decode into std::vector to copy");
          auto first =
            n > 0 ? reinterpret_cast<const E*>(bytes.data()) : nullptr;
          std::span<const E> xs{first, n};
          if constexpr (is_span<T>::value) {
            out = T{xs};
          } else {
            std::shared_ptr<const void> keep = frames[0].keep_alive();
            if (adopt != nullptr && adopt->owned()) {
              auto owned =
                std::make_shared<std::vector<std::byte>>(adopt->release());
              xs = std::span<const E>{reinterpret_cast<const E*>(owned->data()),
                                      n};
              keep = std::move(owned);
            }
            out = T{xs, std::move(keep)};
          }
        } else {
          take_elements(frames[0], adopt, out);
        }
      } else {
        if (bytes.size() != sizeof(T))
          return make_error(errc::malformed_frame,
                            describe(info) + " (frame 0): holds " +
                              std::to_string(bytes.size()) +
                              " bytes, the type has " +
                              std::to_string(sizeof(T)));
        std::memcpy(static_cast<void*>(&out), bytes.data(), sizeof(T));
      }
      return {};
    },
    [] { return std::string{" (frame 0)"}; });
}

} // namespace ferry::serializers::detail
