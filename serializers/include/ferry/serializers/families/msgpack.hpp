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
// Exactness (docs/wire-format.md, section 7): ferry's writer packs every
// double as float64 and every float as float32, whatever its value
// (msgpack-cxx on its own packs a double with an integral value as an
// integer: -0.0 would come back as 0, 7.0 reach Python as the integer 7),
// and a std::string only when it is UTF-8 text (msgpack's str is text).
// Reading,
// a float or double member takes a float32 or float64 bit for bit (NaN
// payloads included), and an integer, or a float64 into a float, only when
// the member's type holds it exactly (`errc::inexact_value` otherwise); a
// std::string takes a str of well-formed UTF-8 only (`invalid_text`); a
// std::map, std::set and their unordered forms refuse a key given twice
// (`duplicate_key`); a plain aggregate takes an array of exactly its field
// count (`member_mismatch`); a map where ferry writes an array or a bin,
// or an array where it writes a map or a bin, is refused
// (`member_mismatch`). These conversions replace msgpack-cxx's own in its
// default API namespace (the aggregates' here, the others in
// detail/msgpack_checked_convert.hpp), so a translation unit that converts
// msgpack objects into these types includes this header before it does.
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
#include "ferry/serializers/detail/each_member.hpp"

#include <msgpack.hpp>

#include "ferry/serializers/detail/exact.hpp"
#include "ferry/serializers/detail/member_at.hpp"
#include "ferry/serializers/detail/msgpack_checked_convert.hpp"
#include "ferry/serializers/detail/msgpack_handles.hpp"
#include "ferry/serializers/detail/take_elements.hpp"
#include "ferry/serializers/frame.hpp"
#include "ferry/serializers/member_names.hpp"
#include "ferry/serializers/type_version.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <deque>
#include <forward_list>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ferry::serializers::detail {

struct msgpack_policy {
  static constexpr const char* name = "msgpack";
  static constexpr const char* how =
    "msgpack serialization: add MSGPACK_DEFINE(...) to it, make it a plain "
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
concept msgpack_reflect =
  is_reflectable_v<T> && !has_msgpack_define<T> && !msgpack_adaptor<T>::value &&
  all_ok<msgpack_policy, field_types<T>>();

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
  void finish() { out_.resize(used_); }

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

/// What msgpack refuses to write as text, and what to send instead.
inline constexpr const char* msgpack_text_fix =
  "send bytes as std::vector<char>, std::vector<unsigned char> or "
  "std::vector<std::byte> (msgpack bin), or use cereal.binary";

} // namespace ferry::serializers::detail

namespace msgpack {
MSGPACK_API_VERSION_NAMESPACE(v1) {

  // ferry's writer replaces three of msgpack-cxx's packing functions, for its
  // own stream type only (so no other code sees them): a double is always a
  // float64 and a float always a float32 (msgpack-cxx packs integral values as
  // integers), and a str's bytes must be UTF-8.

  template <>
  inline packer<ferry::serializers::detail::msgpack_writer>&
  packer<ferry::serializers::detail::msgpack_writer>::pack_double(double d) {
    char buf[9];
    buf[0] = static_cast<char>(0xcbu);
    _msgpack_store64(&buf[1], std::bit_cast<uint64_t>(d));
    append_buffer(buf, 9);
    return *this;
  }

  template <>
  inline packer<ferry::serializers::detail::msgpack_writer>&
  packer<ferry::serializers::detail::msgpack_writer>::pack_float(float d) {
    char buf[5];
    buf[0] = static_cast<char>(0xcau);
    _msgpack_store32(&buf[1], std::bit_cast<uint32_t>(d));
    append_buffer(buf, 5);
    return *this;
  }

  template <>
  inline packer<ferry::serializers::detail::msgpack_writer>&
  packer<ferry::serializers::detail::msgpack_writer>::pack_str_body(
    const char* b, uint32_t l) {
    ferry::serializers::detail::check_text(
      {b, l}, true, "msgpack", ferry::serializers::detail::msgpack_text_fix,
      ferry::serializers::detail::byte_of_string);
    append_buffer(b, l);
    return *this;
  }

} // MSGPACK_API_VERSION_NAMESPACE(v1)
} // namespace msgpack

namespace ferry::serializers::detail {

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
      if constexpr (std::is_same_v<T, std::string>) {
        check_text(x, true, "msgpack", msgpack_text_fix, byte_of_string);
        pk.pack_str(n);
      } else
        pk.pack_bin(n);
      w.finish();
      return {};
    },
    [] { return std::string{}; });
  if (err)
    return err;
  frames.push_back(
    frame::view(std::as_bytes(std::span{x.data(), x.size()}), keep_alive));
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
    bool str = false;
    if (!head.empty()) {
      switch (std::to_integer<uint8_t>(head[0])) {
      case 0xd9: // str 8
        str = true;
        [[fallthrough]];
      case 0xc4: // bin 8
        width = 1;
        break;
      case 0xda: // str 16
        str = true;
        [[fallthrough]];
      case 0xc5: // bin 16
        width = 2;
        break;
      case 0xdb: // str 32
        str = true;
        [[fallthrough]];
      case 0xc6: // bin 32
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
    // A std::string is text: a str, as its encoder writes it.
    if (std::is_same_v<T, std::string> && !str)
      throw decode_fault{errc::decode_failed,
                         "a msgpack bin where the value is a std::string, "
                         "which msgpack carries as str (UTF-8 text)"};
    if (head.size() != 1 + width)
      throw decode_fault{
        head.size() < 1 + width ? errc::truncated_frame : errc::trailing_bytes,
        "the bin or str header takes " + std::to_string(1 + width) +
          " bytes, the frame " + "holds " + std::to_string(head.size())};
    uint64_t n = 0;
    for (size_t i = 1; i <= width; ++i)
      n = (n << 8) | std::to_integer<uint8_t>(head[i]);
    frame_index = 1;
    auto bytes = frames[1].bytes();
    if (n != bytes.size())
      throw decode_fault{errc::frame_mismatch, "the header says " +
                                                 std::to_string(n) +
                                                 " bytes, the frame holds " +
                                                 std::to_string(bytes.size())};
    if constexpr (std::is_same_v<T, std::string>)
      check_text({reinterpret_cast<const char*>(bytes.data()), bytes.size()},
                 true, "msgpack", msgpack_text_fix,
                 [](size_t i) { return "at offset " + std::to_string(i); });
    // The bytes are frame 1's: the allocation is bounded by what arrived.
    take_elements(frames[1], adopt, out);
    return {};
  });
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

namespace ferry::serializers::detail {

/// Converts a msgpack map from member names to values into the evolving
/// aggregate `x` (type_version.hpp): a name `T` lacks is skipped, a member
/// the map lacks keeps the value `x` has (its default), a name given twice
/// is refused.
template <class T>
const msgpack::object& msgpack_convert_by_name(const msgpack::object& o, T& x) {
  constexpr auto names = member_names<T>();
  if (o.type != msgpack::type::MAP)
    throw decode_fault{errc::member_mismatch,
                       "a msgpack value that is not a map where " +
                         type_label<T>() + " (version " +
                         std::to_string(type_version<T>::value) +
                         ") is the map of its members by name; the sender "
                         "writes the type without a version"};
  std::array<bool, names.size()> seen{};
  for (uint32_t i = 0; i < o.via.map.size; ++i) {
    auto& entry = o.via.map.ptr[i];
    if (entry.key.type != msgpack::type::STR)
      throw decode_fault{errc::member_mismatch,
                         "a key that is not a string in the map of " +
                           type_label<T>() + "'s members"};
    std::string_view key{entry.key.via.str.ptr, entry.key.via.str.size};
    size_t index = 0;
    while (index < names.size() && names[index] != key)
      ++index;
    if (index == names.size())
      continue; // a member of the sender's version only
    if (seen[index])
      throw decode_fault{errc::duplicate_key, "member '" + std::string{key} +
                                                "' of " + type_label<T>() +
                                                " is given twice"};
    seen[index] = true;
    with_member(x, index, [&](auto& field) {
      try {
        entry.val.convert(field);
      } catch (const msgpack::type_error&) {
        throw decode_fault{
          errc::decode_failed,
          "the msgpack value's type does not convert into the member's "
          "(msgpack-cxx's type_error); the member's type differs between "
          "the sender's version and the receiver's, or the input is "
          "corrupt"};
      }
    });
  }
  return o;
}

} // namespace ferry::serializers::detail

namespace msgpack {
MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS) {
  namespace adaptor {

  /// Packs plain aggregates as an array of their fields, and those with a
  /// version (type_version.hpp) as a map from each field's name to its value.
  template <class T>
  struct pack<
    T, std::enable_if_t<ferry::serializers::detail::msgpack_reflect<T>>> {
    template <class Stream>
    packer<Stream>& operator()(packer<Stream>& o, const T& x) const {
      [[maybe_unused]] constexpr auto names =
        ferry::serializers::member_names<T>();
      constexpr bool by_name = ferry::serializers::detail::evolving<T>;
      constexpr auto members =
        static_cast<uint32_t>(ferry::serializers::field_count<T>());
      if constexpr (by_name)
        o.pack_map(members);
      else
        o.pack_array(members);
      ferry::serializers::detail::each_member(
        x, [&](const auto& field, size_t index) {
          // A name is an identifier (member_names.hpp): the UTF-8 check of
          // pack_str_body never refuses it.
          if constexpr (by_name) {
            auto name = names[index];
            o.pack_str(static_cast<uint32_t>(name.size()));
            o.pack_str_body(name.data(), static_cast<uint32_t>(name.size()));
          }
          o.pack(field);
        });
      return o;
    }
  };

  /// Converts an array of fields back into a plain aggregate: exactly as many
  /// elements as fields.
  template <class T>
  struct convert<
    T, std::enable_if_t<ferry::serializers::detail::msgpack_reflect<T>>> {
    const msgpack::object& operator()(const msgpack::object& o, T& x) const {
      using ferry::serializers::detail::decode_fault;
      if constexpr (ferry::serializers::detail::evolving<T>)
        return ferry::serializers::detail::msgpack_convert_by_name(o, x);
      ferry::serializers::detail::require_kind<T>(o, msgpack::type::ARRAY);
      if (o.type != msgpack::type::ARRAY)
        throw msgpack::type_error();
      constexpr auto members = ferry::serializers::field_count<T>();
      if (o.via.array.size != members)
        throw decode_fault{
          ferry::serializers::errc::member_mismatch,
          "an array of " + std::to_string(o.via.array.size) +
            " elements where " + ferry::serializers::detail::type_label<T>() +
            " has " + std::to_string(members) +
            " members; ferry writes a plain aggregate as the array of its "
            "members, so the sender's type differs from the receiver's"};
      ferry::serializers::detail::each_member(
        x, [&](auto& field, size_t index) {
          try {
            o.via.array.ptr[index].convert(field);
          } catch (const msgpack::type_error&) {
            throw decode_fault{
              ferry::serializers::errc::decode_failed,
              "the msgpack value's type does not convert into the member's "
              "(msgpack-cxx's type_error); the sender's type differs from "
              "the receiver's, or the input is corrupt"};
          }
        });
      return o;
    }
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
  struct convert<T,
                 std::enable_if_t<ferry::serializers::detail::fixed_enum<T>>> {
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
