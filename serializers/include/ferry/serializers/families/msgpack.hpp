// The `msgpack` family (msgpack-cxx).
//
// Frame 0 holds exactly what `msgpack::pack(buffer, value)` writes, so plain
// msgpack readers in any language decode it (Python: `msgpack.unpackb`).
// Aggregates with no msgpack code of their own encode as an array of their
// fields, like `MSGPACK_DEFINE`; enums as their underlying integer.
//
// Cannot express: std::variant (msgpack-cxx has no adaptor), pointers of any
// kind and therefore shared identity, long double. Such types fall back to
// the next family in the preference list.
//
// Hostile input: unpacking runs msgpack-cxx's own object builder under a
// visitor that checks nesting depth and charges the memory of every array
// and map (one msgpack::object per element) to the allocation budget before
// msgpack allocates it; truncation, malformed bytes and trailing bytes are
// typed errors. Strings and binaries are referenced from the frame, never
// copied into the zone.
#pragma once

#include "ferry/serializers/detail/capability.hpp"
#include "ferry/serializers/detail/codec_common.hpp"

#include <msgpack.hpp>

#include <algorithm>
#include <cstring>

namespace ferry::serializers::detail {

struct msgpack_policy {
  static constexpr const char* name = "msgpack";
  static constexpr const char* how
    = "msgpack serialization: add MSGPACK_DEFINE(...) to it, make it a plain "
      "aggregate, specialise msgpack's adaptors and "
      "ferry::serializers::msgpack_adaptor<T>, or register_serializer<T> a "
      "stand-in";
  static constexpr bool enums = true;
  static constexpr bool optionals = true;
  static constexpr bool variants = false;
  static constexpr bool separate_frames = true;

  template <class T>
  static constexpr bool own() {
    return has_msgpack_define<T> || msgpack_adaptor<T>::value;
  }

  template <class T>
  static constexpr bool scalar() {
    return !std::is_same_v<T, long double>;
  }

  template <class T>
  static constexpr bool string() {
    return std::is_same_v<T, std::string>;
  }

  template <class T>
  static constexpr bool sequence() {
    return !is_instance_v<T, std::unordered_multiset>;
  }

  template <class T>
  static constexpr bool pointer() {
    return false;
  }

  template <class T>
  static constexpr bool leaf() {
    return false;
  }
};

template <class T>
concept msgpack_reflect
  = is_reflectable_v<T> && !has_msgpack_define<T> && !msgpack_adaptor<T>::value
    && all_ok<msgpack_policy, field_types<T>>();

/// Appends msgpack output to a byte vector. msgpack-cxx writes a few bytes
/// at a time, so `write` is a bounds check and a memcpy into bytes the
/// vector already holds. The vector's size runs ahead of the output in steps
/// of 16 KiB (std::vector zero-fills what it grows into: in steps, that
/// happens in cache right before the bytes are written, instead of one pass
/// over a pooled buffer's whole capacity); its capacity grows by doubling.
/// `finish` cuts it to the bytes written.
class msgpack_writer {
public:
  explicit msgpack_writer(std::vector<std::byte>& out) : out_(out) {
    out_.clear();
  }

  void write(const char* data, size_t n) {
    if (out_.size() - used_ < n)
      grow(n);
    auto* dst = reinterpret_cast<char*>(out_.data()) + used_;
    // msgpack packs a value into a small buffer as a type byte, stored
    // alone, and 0, 1, 2, 4 or 8 bytes stored as one integer, then calls
    // write with a length that is not a constant here. Copy the same way it
    // was stored: a load that straddles the two stores cannot be forwarded
    // from the store buffer and stalls (that was 2/3 of msgpack's encode
    // time for doubles). Longer runs (strings, binaries) take memcpy.
    switch (n) {
      case 1:
        dst[0] = data[0];
        break;
      case 2:
        dst[0] = data[0];
        dst[1] = data[1];
        break;
      case 3:
        dst[0] = data[0];
        std::memcpy(dst + 1, data + 1, 2);
        break;
      case 5:
        dst[0] = data[0];
        std::memcpy(dst + 1, data + 1, 4);
        break;
      case 9:
        dst[0] = data[0];
        std::memcpy(dst + 1, data + 1, 8);
        break;
      default:
        std::memcpy(dst, data, n);
    }
    used_ += n;
  }

  /// Shrinks the vector to the bytes written.
  void finish() {
    out_.resize(used_);
  }

private:
  static constexpr size_t step = 16 * 1024;

  void grow(size_t n) {
    auto need = used_ + n;
    if (need > out_.capacity())
      out_.reserve(std::max({need, 2 * out_.capacity(), size_t{256}}));
    out_.resize(std::min(out_.capacity(), std::max(need, used_ + step)));
  }

  std::vector<std::byte>& out_;
  size_t used_ = 0;
};

template <class T>
caf::error msgpack_encode(const T& x, std::vector<std::byte>& out,
                          const call_info& info) {
  return guarded(
    info,
    [&]() -> caf::error {
      msgpack_writer w{out};
      msgpack::pack(w, x);
      w.finish();
      return {};
    },
    [] { return std::string{}; });
}

/// Unpacks hostile `in` in one pass, with depth and allocation checks before
/// every container is allocated; strings and binaries reference `in`.
/// Throws `decode_fault` or msgpack's exceptions.
msgpack::object_handle msgpack_unpack_checked(std::span<const std::byte> in,
                                              const limits& lim);

template <class T>
caf::error msgpack_decode(std::span<const std::byte> in, T& out,
                          const limits& lim, const call_info& info) {
  return guarded(
    info,
    [&]() -> caf::error {
      auto handle = msgpack_unpack_checked(in, lim);
      handle.get().convert(out);
      return {};
    },
    [] { return std::string{" (frame 0)"}; });
}

} // namespace ferry::serializers::detail

namespace msgpack {
MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS) {
namespace adaptor {

/// Packs plain aggregates as an array of their fields.
template <class T>
struct pack<T, std::enable_if_t<ferry::serializers::detail::msgpack_reflect<T>>> {
  template <class Stream>
  packer<Stream>& operator()(packer<Stream>& o, const T& x) const {
    ferry::serializers::visit_fields(x, [&](const auto&... fields) {
      o.pack_array(static_cast<uint32_t>(sizeof...(fields)));
      [[maybe_unused]] size_t index = 0;
      [[maybe_unused]] auto one = [&](const auto& field) {
        if (ferry::serializers::detail::tracing())
          ferry::serializers::detail::trace_member(typeid(T), index,
                                                   typeid(field));
        ++index;
        o.pack(field);
      };
      (one(fields), ...);
    });
    return o;
  }
};

/// Converts an array of fields back into a plain aggregate.
template <class T>
struct convert<T,
               std::enable_if_t<ferry::serializers::detail::msgpack_reflect<T>>> {
  const msgpack::object& operator()(const msgpack::object& o, T& x) const {
    if (o.type != msgpack::type::ARRAY
        || o.via.array.size != ferry::serializers::field_count<T>())
      throw msgpack::type_error();
    [[maybe_unused]] size_t index = 0;
    ferry::serializers::visit_fields(x, [&](auto&... fields) {
      [[maybe_unused]] auto one = [&](auto& field) {
        if (ferry::serializers::detail::tracing())
          ferry::serializers::detail::trace_member(typeid(T), index,
                                                   typeid(field));
        o.via.array.ptr[index++].convert(field);
      };
      (one(fields), ...);
    });
    return o;
  }
};

/// Packs enums as their underlying integer.
template <class T>
struct pack<T, std::enable_if_t<std::is_enum_v<T>>> {
  template <class Stream>
  packer<Stream>& operator()(packer<Stream>& o, const T& x) const {
    o.pack(static_cast<std::underlying_type_t<T>>(x));
    return o;
  }
};

/// Converts an integer back into an enum.
template <class T>
struct convert<T, std::enable_if_t<std::is_enum_v<T>>> {
  const msgpack::object& operator()(const msgpack::object& o, T& x) const {
    std::underlying_type_t<T> tmp{};
    o.convert(tmp);
    x = static_cast<T>(tmp);
    return o;
  }
};

} // namespace adaptor
} // MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS)
} // namespace msgpack
