// The `msgpack` family (msgpack-cxx).
//
// Frame 0 holds exactly what `msgpack::pack(buffer, value)` writes, so plain
// msgpack readers in any language decode it (Python: `msgpack.unpackb`).
// Aggregates with no msgpack code of their own encode as an array of their
// fields, like `MSGPACK_DEFINE`; enums with a fixed underlying type (scoped
// enums, `enum E : int`) as their underlying integer. Other enums have no
// ferry adaptor: a number outside their range would be undefined behaviour
// (msgpack's MSGPACK_ADD_ENUM makes that the user's choice).
//
// Actor handles (caf::actor, caf::actor_addr, caf::strong_actor_ptr,
// caf::typed_actor<...>) travel as an array `[kind, id]`, the token of the
// calling thread's handle hook (actor_handles.hpp), wherever they sit
// (detail/msgpack_handles.hpp).
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
// copied into the zone. Converting the objects into the value then charges
// the decode call's budget (as the cereal families do) before msgpack-cxx
// sizes a std::vector, std::deque, std::list or std::forward_list to an
// array's length: an array of nils costs one byte per element on the wire,
// an element of the container may take kilobytes.
//
// Large top-level byte arrays and strings travel in two frames, like the
// cereal families' arrays (families/cereal.hpp): a value that is itself a
// std::vector of std::byte, char or unsigned char (msgpack bin) or a
// std::string (msgpack str), of at least `msgpack_split_bytes`, encoded with
// a keep-alive, gives frame 0 = the bin or str header and frame 1 = a view of
// the bytes. Concatenated, the frames are what msgpack::pack writes.
#pragma once

#include "ferry/serializers/detail/capability.hpp"
#include "ferry/serializers/detail/codec_common.hpp"

#include <msgpack.hpp>

#include "ferry/serializers/detail/msgpack_handles.hpp"
#include "ferry/serializers/detail/take_elements.hpp"
#include "ferry/serializers/frame.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <forward_list>
#include <list>
#include <memory>
#include <span>
#include <string>
#include <vector>

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

/// Top-level byte arrays and strings of at least this many bytes are split
/// (see above).
inline constexpr size_t msgpack_split_bytes = 64 * 1024;

template <class T>
struct msgpack_splittable : std::false_type {};

template <class A>
struct msgpack_splittable<std::vector<std::byte, A>> : std::true_type {};

template <class A>
struct msgpack_splittable<std::vector<char, A>> : std::true_type {};

template <class A>
struct msgpack_splittable<std::vector<unsigned char, A>> : std::true_type {};

template <>
struct msgpack_splittable<std::string> : std::true_type {};

/// Whether `x` is a byte array or string large enough to split.
template <class T>
bool msgpack_should_split(const T& x) {
  if constexpr (msgpack_splittable<T>::value)
    return x.size() >= msgpack_split_bytes && x.size() <= UINT32_MAX;
  else
    return false;
}

/// Writes the two frames of a split byte array or string: `head` receives
/// the bin or str header, `frames` gets the view of the bytes appended.
template <class T>
caf::error msgpack_encode_split(const T& x, std::vector<std::byte>& head,
                                std::vector<frame>& frames,
                                const std::shared_ptr<const void>& keep_alive,
                                const call_info& info) {
  auto err = guarded(
    info,
    [&]() -> caf::error {
      msgpack_writer w{head};
      msgpack::packer<msgpack_writer> pk{w};
      auto n = static_cast<uint32_t>(x.size());
      if constexpr (std::is_same_v<T, std::string>)
        pk.pack_str(n);
      else
        pk.pack_bin(n);
      w.finish();
      return {};
    },
    [] { return std::string{}; });
  if (err)
    return err;
  frames.push_back(frame::view(std::as_bytes(std::span{x.data(), x.size()}),
                               keep_alive));
  return {};
}

/// Reads a split byte array or string: the bin or str header from frame 0,
/// the bytes from frame 1, adopting frame 1 for std::vector<std::byte> when
/// `adopt` is that frame and owns its bytes.
template <class T>
caf::error msgpack_decode_split(std::span<const frame> frames, frame* adopt,
                                T& out, const call_info& info) {
  return guarded_frames(info, [&](size_t& frame_index) -> caf::error {
    auto head = frames[0].bytes();
    size_t width = 0;
    if (!head.empty()) {
      switch (std::to_integer<uint8_t>(head[0])) {
        case 0xc4: // bin 8
        case 0xd9: // str 8
          width = 1;
          break;
        case 0xc5: // bin 16
        case 0xda: // str 16
          width = 2;
          break;
        case 0xc6: // bin 32
        case 0xdb: // str 32
          width = 4;
          break;
        default:
          break;
      }
    }
    if (width == 0)
      throw decode_fault{errc::malformed_frame,
                         "a two-frame msgpack payload must start with a "
                         "bin or str header"};
    if (head.size() != 1 + width)
      throw decode_fault{head.size() < 1 + width ? errc::truncated_frame
                                                 : errc::trailing_bytes,
                         "the bin or str header takes "
                           + std::to_string(1 + width) + " bytes, the frame "
                           + "holds " + std::to_string(head.size())};
    uint64_t n = 0;
    for (size_t i = 1; i <= width; ++i)
      n = (n << 8) | std::to_integer<uint8_t>(head[i]);
    frame_index = 1;
    auto bytes = frames[1].bytes();
    if (n != bytes.size())
      throw decode_fault{errc::frame_mismatch,
                         "the header says " + std::to_string(n)
                           + " bytes, the frame holds "
                           + std::to_string(bytes.size())};
    // The bytes are frame 1's: the allocation is bounded by what arrived.
    take_elements(frames[1], adopt, out);
    return {};
  });
}

/// msgpack-cxx's conversion of an array into container `C`, which resizes
/// `C` to the array's length before converting a single element, preceded
/// by charging `ElementBytes` per element to the decode call's allocation
/// budget (`charge`). Throws `decode_fault` when the budget is spent.
template <class C, size_t ElementBytes>
struct charged_convert {
  const msgpack::object& operator()(const msgpack::object& o, C& x) const {
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

/// Converts arrays into the containers msgpack-cxx sizes before converting
/// their elements (see `charged_convert`).
template <class T, class A>
struct convert<std::vector<T, A>>
  : ferry::serializers::detail::charged_convert<std::vector<T, A>, sizeof(T)> {
};

template <class T, class A>
struct convert<std::deque<T, A>>
  : ferry::serializers::detail::charged_convert<std::deque<T, A>, sizeof(T)> {
};

template <class T, class A>
struct convert<std::list<T, A>>
  : ferry::serializers::detail::charged_convert<std::list<T, A>,
                                                sizeof(T)
                                                  + 2 * sizeof(void*)> {};

template <class T, class A>
struct convert<std::forward_list<T, A>>
  : ferry::serializers::detail::charged_convert<std::forward_list<T, A>,
                                                sizeof(T) + sizeof(void*)> {
};

/// Packs enums with a fixed underlying type as their underlying integer.
template <class T>
struct pack<T, std::enable_if_t<ferry::serializers::detail::fixed_enum<T>>> {
  template <class Stream>
  packer<Stream>& operator()(packer<Stream>& o, const T& x) const {
    o.pack(static_cast<std::underlying_type_t<T>>(x));
    return o;
  }
};

/// Converts an integer back into an enum with a fixed underlying type (every
/// value of that type is one of the enum's).
template <class T>
struct convert<T, std::enable_if_t<ferry::serializers::detail::fixed_enum<T>>> {
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
