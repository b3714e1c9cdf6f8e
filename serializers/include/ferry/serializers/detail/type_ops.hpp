// Per-type, type-erased access to the built-in families. Not API.
#pragma once

#include "ferry/serializers/detail/buffer_pool.hpp"
#include "ferry/serializers/families/caf.hpp"
#include "ferry/serializers/families/cereal.hpp"
#include "ferry/serializers/families/msgpack.hpp"
#include "ferry/serializers/families/raw.hpp"
#include "ferry/serializers/separate.hpp"
#include "ferry/serializers/shape.hpp"
#include "ferry/serializers/wrap.hpp"

#include <array>
#include <optional>
#include <string_view>
#include <typeindex>

namespace ferry::serializers::detail {

/// The built-in families, in the order of `builtin_names`.
enum class builtin : uint8_t {
  cereal_binary,
  cereal_portable,
  cereal_json,
  msgpack,
  caf,
  raw,
};

inline constexpr size_t builtin_count = 6;

inline constexpr std::array<std::string_view, builtin_count> builtin_names{
  "cereal.binary", "cereal.portable", "cereal.json", "msgpack", "caf", "raw"};

/// Returns the built-in family called `name`, if any.
std::optional<builtin> builtin_from_name(std::string_view name) noexcept;

template <class T>
constexpr bool builtin_can_encode(builtin f) {
  switch (f) {
  case builtin::cereal_binary:
  case builtin::cereal_portable:
    return deep_ok<cereal_policy, T>();
  case builtin::cereal_json:
    return deep_ok<cereal_json_policy, T>();
  case builtin::msgpack:
    return deep_ok<msgpack_policy, T>();
  case builtin::caf:
    return deep_ok<caf_policy, T>();
  case builtin::raw:
    return raw_can_encode<T>();
  }
  return false;
}

template <class T>
constexpr bool builtin_can_decode(builtin f) {
  if (f == builtin::raw)
    return raw_can_decode<T>();
  return builtin_can_encode<T>(f) && std::is_default_constructible_v<T>;
}

template <class T>
std::string builtin_why_not(builtin f) {
  switch (f) {
  case builtin::cereal_binary:
  case builtin::cereal_portable:
    return why_not<cereal_policy, T>();
  case builtin::cereal_json:
    return why_not<cereal_json_policy, T>();
  case builtin::msgpack:
    return why_not<msgpack_policy, T>();
  case builtin::caf:
    return why_not<caf_policy, T>();
  case builtin::raw:
    return raw_why_not<T>();
  }
  return "unknown family";
}

/// Encodes a large top-level array with `f` as two frames when the family
/// supports that for T: `head` gets what the family writes before the
/// elements, `frames` a view of the elements (families/cereal.hpp,
/// msgpack.hpp, caf.hpp). Returns false when it does not apply, else sets
/// `err` on failure. Only when the caller keeps the value alive
/// (`info.views_allowed`): otherwise callers rely on these families' frames
/// owning their bytes.
template <class T>
bool split_encode(builtin f, const T& x, std::vector<std::byte>& head,
                  std::vector<frame>& frames,
                  const std::shared_ptr<const void>& keep_alive,
                  const call_info& info, caf::error& err) {
  if (!info.views_allowed || keep_alive == nullptr)
    return false;
  if constexpr (cereal_splittable<T>::value) {
    if (f == builtin::cereal_binary &&
        cereal_should_split<cereal_format::binary>(x)) {
      err = cereal_encode_split<cereal_format::binary>(x, head, frames,
                                                       keep_alive, info);
      return true;
    }
    if (f == builtin::cereal_portable &&
        cereal_should_split<cereal_format::portable>(x)) {
      err = cereal_encode_split<cereal_format::portable>(x, head, frames,
                                                         keep_alive, info);
      return true;
    }
    if constexpr (deep_ok<cereal_json_policy, T>()) {
      if (f == builtin::cereal_json &&
          cereal_should_split<cereal_format::json>(x)) {
        err = cereal_encode_split<cereal_format::json>(x, head, frames,
                                                       keep_alive, info);
        return true;
      }
    }
  }
  if constexpr (msgpack_splittable<T>::value) {
    if (f == builtin::msgpack && msgpack_should_split(x)) {
      err = msgpack_encode_split(x, head, frames, keep_alive, info);
      return true;
    }
  }
  if constexpr (std::is_same_v<T, std::vector<std::byte>>) {
    if (f == builtin::caf && caf_should_split(x)) {
      err = caf_encode_split(x, head, frames, keep_alive, info);
      return true;
    }
  }
  return false;
}

/// Decodes the two frames of a split array (see `split_encode`); returns
/// false when `frames` is not that form for T and `f`.
template <class T>
bool split_decode(builtin f, std::span<const frame> frames, frame* adopt,
                  T& out, const limits& lim, const call_info& info,
                  caf::error& err) {
  if (frames.size() != 2)
    return false;
  if constexpr (cereal_splittable<T>::value) {
    if (f == builtin::cereal_binary) {
      err = cereal_decode_split<cereal_format::binary>(frames, adopt, out, lim,
                                                       info);
      return true;
    }
    if (f == builtin::cereal_portable) {
      err = cereal_decode_split<cereal_format::portable>(frames, adopt, out,
                                                         lim, info);
      return true;
    }
    if constexpr (deep_ok<cereal_json_policy, T>()) {
      if (f == builtin::cereal_json) {
        err = cereal_decode_split<cereal_format::json>(frames, adopt, out, lim,
                                                       info);
        return true;
      }
    }
  }
  if constexpr (msgpack_splittable<T>::value) {
    if (f == builtin::msgpack) {
      err = msgpack_decode_split(frames, adopt, out, info);
      return true;
    }
  }
  if constexpr (std::is_same_v<T, std::vector<std::byte>>) {
    if (f == builtin::caf) {
      err = caf_decode_split(frames, adopt, out, info);
      return true;
    }
  }
  return false;
}

/// Encodes `x` with `f`, appending frame 0 (and any separate frames) to
/// `frames`.
template <class T>
caf::error builtin_encode(builtin f, const T& x, std::vector<frame>& frames,
                          const std::shared_ptr<const void>& keep_alive,
                          const call_info& info) {
  if (f == builtin::raw) {
    if constexpr (raw_can_encode<T>())
      return raw_encode(x, frames, keep_alive);
    return make_error(errc::encode_failed, describe(info) + ": not raw");
  }
  frames.clear();
  frames.emplace_back();
  caf::error err;
  // A split array's head is a few bytes: no pooled buffer for it.
  if (std::vector<std::byte> head;
      split_encode(f, x, head, frames, keep_alive, info, err)) {
    if (err)
      return err;
    frames[0] = frame{std::move(head)};
    return {};
  }
  auto main = take_buffer();
  switch (f) {
  case builtin::cereal_binary:
  case builtin::cereal_portable:
    if constexpr (deep_ok<cereal_policy, T>()) {
      if (f == builtin::cereal_binary)
        err = cereal_encode<cereal_format::binary>(x, main, info);
      else
        err = cereal_encode<cereal_format::portable>(x, main, info);
    }
    break;
  case builtin::cereal_json:
    if constexpr (deep_ok<cereal_json_policy, T>())
      err = cereal_encode<cereal_format::json>(x, main, info);
    break;
  case builtin::msgpack:
    if constexpr (deep_ok<msgpack_policy, T>())
      err = msgpack_encode(x, main, info);
    break;
  case builtin::caf:
    if constexpr (deep_ok<caf_policy, T>())
      err = caf_encode(x, main, info);
    break;
  case builtin::raw:
    break;
  }
  if (err)
    return err;
  frames[0] = pooled_frame(std::move(main));
  return {};
}

/// Decodes `frames` with `f` into `out`; `adopt` is the payload's last frame
/// when the caller gave up the payload (may be null).
template <class T>
caf::error builtin_decode(builtin f, std::span<const frame> frames,
                          frame* adopt, T& out, const limits& lim,
                          const call_info& info) {
  if (f == builtin::raw) {
    if constexpr (raw_can_decode<T>())
      return raw_decode(frames, adopt, out, info);
    return make_error(errc::decode_failed, describe(info) + ": not raw");
  }
  if (auto err = require_main_frame(info, frames))
    return err;
  if (caf::error err; split_decode(f, frames, adopt, out, lim, info, err))
    return err;
  auto in = frames[0].bytes();
  caf::error err;
  // Whether a family decoded (the error is built only when none could: a
  // caf::error with its text costs five allocations).
  bool decoded = false;
  if constexpr (std::is_default_constructible_v<T>) {
    switch (f) {
    case builtin::cereal_binary:
      if constexpr (deep_ok<cereal_policy, T>()) {
        err = cereal_decode<cereal_format::binary>(in, out, lim, info);
        decoded = true;
      }
      break;
    case builtin::cereal_portable:
      if constexpr (deep_ok<cereal_policy, T>()) {
        err = cereal_decode<cereal_format::portable>(in, out, lim, info);
        decoded = true;
      }
      break;
    case builtin::cereal_json:
      if constexpr (deep_ok<cereal_json_policy, T>()) {
        err = cereal_decode<cereal_format::json>(in, out, lim, info);
        decoded = true;
      }
      break;
    case builtin::msgpack:
      if constexpr (deep_ok<msgpack_policy, T>()) {
        err = msgpack_decode(in, out, lim, info);
        decoded = true;
      }
      break;
    case builtin::caf:
      if constexpr (deep_ok<caf_policy, T>()) {
        err = caf_decode(in, out, lim, info);
        decoded = true;
      }
      break;
    case builtin::raw:
      break;
    }
  }
  if (!decoded)
    return make_error(errc::decode_failed,
                      describe(info) + ": the family cannot decode this type");
  if (err || frames.size() == 1)
    return err;
  return require_frames_read(info, frames.size());
}

/// Type-erased operations on one C++ type.
struct type_ops {
  std::type_index type;
  std::string (*label)();
  /// The type's shape (shape.hpp).
  std::string (*shape)();
  bool (*can_encode)(builtin);
  bool (*can_decode)(builtin);
  std::string (*why_not)(builtin);
  caf::error (*encode)(builtin, const void*, std::vector<frame>&,
                       const std::shared_ptr<const void>&, const call_info&);
  caf::error (*decode)(builtin, std::span<const frame>, frame*, void*,
                       const limits&, const call_info&);
  void* (*make)();
  void (*destroy)(void*);
  /// Types whose payloads this type can decode too (raw array views).
  std::array<std::type_index, 3> compatible;
};

template <class T>
struct compatible_types {
  static std::array<std::type_index, 3> get() {
    return {typeid(T), typeid(T), typeid(T)};
  }
};

template <class T>
requires raw_array<T>::value struct compatible_types<T> {
  using E = typename raw_array<T>::element;
  static std::array<std::type_index, 3> get() {
    return {typeid(std::vector<E>), typeid(std::span<const E>),
            typeid(array_view<E>)};
  }
};

template <class T>
const type_ops& ops_of() {
  static const type_ops ops{
    typeid(T),
    [] { return type_label<T>(); },
    [] { return shape_of<T>(); },
    [](builtin f) { return builtin_can_encode<T>(f); },
    [](builtin f) { return builtin_can_decode<T>(f); },
    [](builtin f) { return builtin_why_not<T>(f); },
    [](builtin f, const void* x, std::vector<frame>& frames,
       const std::shared_ptr<const void>& keep_alive, const call_info& info) {
      return builtin_encode<T>(f, *static_cast<const T*>(x), frames, keep_alive,
                               info);
    },
    [](builtin f, std::span<const frame> frames, frame* adopt, void* out,
       const limits& lim, const call_info& info) {
      return builtin_decode<T>(f, frames, adopt, *static_cast<T*>(out), lim,
                               info);
    },
    []() -> void* {
      if constexpr (std::is_default_constructible_v<T>)
        return new T();
      else
        return nullptr;
    },
    [](void* ptr) { delete static_cast<T*>(ptr); },
    compatible_types<T>::get(),
  };
  return ops;
}

/// Fails the build with a message naming a member type no family can send.
template <class T>
constexpr void check_members() {
  if constexpr (!custom_only<T>::value) {
    constexpr auto found = find_forbidden<T>();
    static_assert(found != forbidden::lock,
                  "ferry::serializers: this type holds a std::mutex (or "
                  "another lock or condition variable) as a member, and no "
                  "family can send a lock. Fix: give the type its own "
                  "serialize/inspect that leaves the lock out, or send a "
                  "stand-in via register_serializer<T>(to, from) and "
                  "specialise ferry::serializers::custom_only<T>.");
    static_assert(found != forbidden::thread,
                  "ferry::serializers: this type holds a std::thread (or "
                  "std::jthread) as a member, and no family can send a "
                  "thread. Fix: give the type its own serialize/inspect that "
                  "leaves the thread out, or send a stand-in via "
                  "register_serializer<T>(to, from) and specialise "
                  "ferry::serializers::custom_only<T>.");
    static_assert(found != forbidden::raw_pointer,
                  "ferry::serializers: this type holds a raw pointer as a "
                  "member; its address means nothing in another process. "
                  "Fix: hold the value itself, a std::shared_ptr or a "
                  "std::unique_ptr, or give the type its own "
                  "serialize/inspect.");
  }
}

} // namespace ferry::serializers::detail
