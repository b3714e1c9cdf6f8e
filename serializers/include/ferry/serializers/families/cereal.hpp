// The cereal families: `cereal.binary`, `cereal.portable`, `cereal.json`.
//
// Frames hold exactly what cereal's BinaryOutputArchive,
// PortableBinaryOutputArchive (default options) and JSONOutputArchive write for
// `ar(value)`, so plain cereal code with no ferry in it decodes frame 0 of a
// one-frame payload. Decoding the binary formats goes through ferry's
// bounds-checked archives (see detail/cereal_archive.hpp); decoding JSON
// through ferry's strict reader of cereal's JSON
// (detail/cereal_json_archive.hpp) after a pre-scan of the text (nesting depth,
// and numbers: those longer than cereal ever writes, more than 20 significant
// digits among them, are refused, since rapidjson 1.1 reads some of them with
// undefined behaviour), with allocations bounded by the element counts actually
// present (for JSON, the parsed text is charged to the allocation budget too;
// JSON is meant for debugging a link). Each reader refuses a map or set that
// names a key twice.
//
// Large top-level arrays travel in two frames: a value that is itself a
// std::vector or std::basic_string of numbers or std::byte, of at least
// `cereal_split_bytes`, encoded with a keep-alive (as a link does), gives
// frame 0 = a head and frame 1 = a view of the elements, so the elements
// reach the store or the socket without first being copied behind a size
// tag (the copy that made cereal.binary cost twice raw for large byte
// arrays), like Dask's frames for top-level buffers. Decoding reads either
// form.
// - Binary formats: the head is what cereal writes before the elements (the
//   portable format's endianness byte, the size tag); concatenated, the two
//   frames are cereal's output.
// - cereal.json: the head is a JSON object that cereal's JSONInputArchive
//   reads, `{"elements": N, "element_bytes": S}`, and frame 1 holds the
//   elements as they are in memory, little-endian (a big-endian sender keeps
//   multi-byte elements in one JSON frame; a big-endian receiver swaps). As
//   text, every byte of a byte array became a decimal number, a comma and
//   indentation: about 14 bytes of JSON per byte, written and parsed at a few
//   MB/s (64 MiB took 20 s a message over tcp). Arrays inside a value stay
//   JSON text; members opt out with `separate<V>` as in the other families.
//
// cereal.json carries text and numbers exactly or refuses them on encode: a
// std::string must be well-formed UTF-8 without NUL (cereal's own JSON reader
// cuts strings at NUL), and the only NaN is the default quiet NaN (JSON
// writes every NaN as `NaN`); every other float and double comes back bit
// for bit.
//
// Shared identity: all three express it; a value holding one
// `std::shared_ptr<T>` N times encodes the object once and decodes to N
// pointers to one object.
//
// Actor handles (caf::actor, caf::actor_addr, caf::strong_actor_ptr,
// caf::typed_actor<...>) travel as the token of the calling thread's handle
// hook (actor_handles.hpp) wherever they sit, members of user types included:
// a u8 kind then a u64 id in the binary formats, `{"kind": n, "id": n}` in
// cereal.json (detail/cereal_handles.hpp).
//
// Aggregates with no serialization of their own are serialized field by field
// as if they had `template <class A> void serialize(A& ar) { ar(f0, f1, ...); }`.
//
// CAF 0.17 quirk: a *free* `template <class Archive> void serialize(Archive&, T&)`
// is also picked up by CAF 0.17's legacy detection, which then prefers it over
// `inspect` and fails to compile for the `caf` family. Give types that need
// both cereal and CAF a *member* `serialize` (or member `save`/`load`).
#pragma once

#include "ferry/serializers/detail/capability.hpp"
#include "ferry/serializers/detail/cereal_archive.hpp"
#include "ferry/serializers/detail/cereal_flat.hpp"
#include "ferry/serializers/detail/cereal_handles.hpp"
#include "ferry/serializers/detail/cereal_resolve.hpp"
#include "ferry/serializers/detail/codec_common.hpp"
#include "ferry/serializers/detail/each_member.hpp"
#include "ferry/serializers/detail/take_elements.hpp"

#include "ferry/serializers/frame.hpp"
#include "ferry/serializers/member_names.hpp"
#include "ferry/serializers/options.hpp"
#include "ferry/serializers/type_version.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <istream>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

namespace ferry::serializers::detail {

struct cereal_policy {
  static constexpr const char* name = "cereal";
  static constexpr const char* how =
    "cereal serialization: give it a member serialize(Archive&) or "
    "save/load, make it a plain aggregate, or register_serializer<T> a "
    "stand-in";
  static constexpr bool enums = true;
  static constexpr bool optionals = true;
  static constexpr bool variants = true;
  static constexpr bool separate_frames = true;

  template <class T>
  static constexpr bool own() {
    return has_own_cereal<T>;
  }

  template <class T>
  static constexpr bool scalar() {
    return true;
  }

  template <class T>
  static constexpr bool string() {
    return true;
  }

  template <class T>
  static constexpr bool sequence() {
    return true;
  }

  template <class T>
  static constexpr bool pointer() {
    return !is_instance_v<T, std::weak_ptr> &&
           !std::is_array_v<typename T::element_type> &&
           !std::is_polymorphic_v<typename T::element_type> &&
           std::is_default_constructible_v<typename T::element_type>;
  }

  template <class T>
  static constexpr bool leaf() {
    if constexpr (is_reflectable_v<T>)
      return false;
    else
      return cereal::traits::is_output_serializable<
               T, cereal::BinaryOutputArchive>::value &&
             cereal::traits::is_input_serializable<
               T, cereal::BinaryInputArchive>::value;
  }
};

/// cereal.json: like the binary formats, but cereal's JSON archives write
/// and read `std::string` only (any other `std::basic_string`, e.g.
/// `std::u16string`, does not compile in them), so the family refuses the
/// others with a message instead of failing the user's build.
struct cereal_json_policy : cereal_policy {
  static constexpr const char* name = "cereal.json";

  template <class T>
  static constexpr bool string() {
    return std::is_same_v<T, std::string>;
  }
};

template <class T>
concept cereal_reflect = is_reflectable_v<T> && !has_own_cereal<T> &&
                         all_ok<cereal_policy, field_types<T>>();

/// Top-level arrays of at least this many bytes are split (see above).
inline constexpr size_t cereal_split_bytes = 64 * 1024;

/// What to do with a string cereal.json refuses (a NUL character, which
/// cereal's own JSON reader cuts strings at, or bytes that are not UTF-8).
inline constexpr const char* cereal_json_text_fix =
  "use cereal.binary, cereal.portable or msgpack for it";

/// Refuses a std::string that cereal.json cannot carry exactly.
inline void cereal_json_check_text(std::string_view text) {
  check_text(text, false, "cereal.json", cereal_json_text_fix, byte_of_string);
}

/// Refuses a NaN that cereal.json cannot carry exactly: JSON writes every
/// NaN as `NaN`, which reads back as the default quiet NaN.
template <class F>
void cereal_json_check_nan(F x) {
  if (!std::isnan(x))
    return;
  // The bytes that hold the value (x87's long double has padding).
  constexpr size_t size = std::numeric_limits<F>::digits == 64 ? 10 : sizeof(F);
  auto canonical = std::numeric_limits<F>::quiet_NaN();
  if (std::memcmp(&x, &canonical, size) != 0)
    throw decode_fault{errc::inexact_value,
                       "a NaN with a sign or payload, which cereal.json "
                       "would write as NaN and read back as the default "
                       "quiet NaN; use cereal.binary, cereal.portable or "
                       "msgpack for it"};
}

/// cereal_json_check_nan for every element of a split array: its elements
/// travel as bytes, but cereal.json carries the same values in either form
/// (a value read from one form may be sent again in the other).
template <class T>
void cereal_json_check_nans(const T& xs) {
  using E = typename T::value_type;
  if constexpr (std::is_floating_point_v<E>) {
    for (size_t i = 0; i < xs.size(); ++i) {
      if (!std::isnan(xs[i]))
        continue;
      try {
        cereal_json_check_nan(xs[i]);
      } catch (decode_fault& e) {
        e.what += " (element " + std::to_string(i) + " of the array)";
        throw;
      }
    }
  }
}

template <cereal_format F, class T>
caf::error cereal_encode(const T& x, std::vector<std::byte>& out,
                         const call_info& info) {
  return guarded(
    info,
    [&]() -> caf::error {
      if constexpr (cereal_flat<F, T>) {
        cereal_flat_encode<F>(x, out);
        return {};
      }
      byte_sink buf{out};
      if constexpr (F == cereal_format::json) {
        // The JSON writer formats through the stream: a fresh one.
        std::ostream os{&buf};
        cereal::JSONOutputArchive ar{os};
        ar(x);
      } else {
        ostream_lease os{&buf};
        if constexpr (F == cereal_format::binary) {
          cereal::BinaryOutputArchive ar{os.get()};
          ar(x);
        } else {
          cereal::PortableBinaryOutputArchive ar{os.get()};
          ar(x);
        }
      }
      buf.finish();
      return {};
    },
    [] { return std::string{}; });
}

template <cereal_format F, class T>
caf::error cereal_decode(std::span<const std::byte> in, T& out,
                         const limits& lim, const call_info& info) {
  size_t offset = 0;
  auto where = [&] {
    return " (frame 0, offset " + std::to_string(offset) + ")";
  };
  return guarded(
    info,
    [&]() -> caf::error {
      if constexpr (F == cereal_format::json) {
        checked_json_archive ar{in, lim};
        struct position_keeper {
          checked_json_archive& ar;
          size_t& offset;
          ~position_keeper() { offset = ar.position(); }
        } keeper{ar, offset};
        ar(out);
        ar.finish();
      } else {
        if constexpr (cereal_flat<F, T>) {
          if (cereal_flat_decode<F>(in, out, lim))
            return {};
        }
        checked_input_archive<F == cereal_format::portable> ar{in,
                                                               lim.max_depth};
        struct position_keeper {
          checked_input_archive<F == cereal_format::portable>& ar;
          size_t& offset;
          ~position_keeper() { offset = ar.position(); }
        } keeper{ar, offset};
        read_top(ar, out);
        if (ar.remaining() != 0)
          throw decode_fault{errc::trailing_bytes,
                             std::to_string(ar.remaining()) +
                               " bytes follow the value"};
      }
      return {};
    },
    where);
}

/// Whether cereal's binary formats write `x` as a size tag then its elements
/// as they are in memory, and `x` is large enough to split.
template <cereal_format F, class T>
bool cereal_should_split(const T& x) {
  if constexpr (!cereal_splittable<T>::value) {
    return false;
  } else {
    using E = typename T::value_type;
    // The portable format swaps multi-byte elements on big-endian machines,
    // and the JSON head promises little-endian elements.
    if constexpr (F != cereal_format::binary && sizeof(E) > 1 &&
                  std::endian::native != std::endian::little)
      return false;
    return x.size() * sizeof(E) >= cereal_split_bytes;
  }
}

/// Writes the two frames of a split array (see above): `head` receives
/// cereal's bytes before the elements, `frames` gets the view of the
/// elements appended.
template <cereal_format F, class T>
caf::error cereal_encode_split(const T& x, std::vector<std::byte>& head,
                               std::vector<frame>& frames,
                               const std::shared_ptr<const void>& keep_alive,
                               const call_info& info) {
  using E = typename T::value_type;
  auto err = guarded(
    info,
    [&]() -> caf::error {
      byte_sink buf{head};
      auto n = static_cast<cereal::size_type>(x.size());
      if constexpr (F == cereal_format::json) {
        // A std::string is a JSON string (see its save below); a
        // std::vector<char> is an array of numbers, where 0 is a number.
        if constexpr (std::is_same_v<T, std::string>)
          cereal_json_check_text(x);
        cereal_json_check_nans(x);
        std::ostream os{&buf};
        cereal::JSONOutputArchive ar{os};
        ar(cereal::make_nvp("elements", static_cast<uint64_t>(n)),
           cereal::make_nvp("element_bytes", uint64_t{sizeof(E)}));
      } else {
        ostream_lease os{&buf};
        if constexpr (F == cereal_format::binary) {
          cereal::BinaryOutputArchive ar{os.get()};
          ar(cereal::make_size_tag(n));
        } else {
          cereal::PortableBinaryOutputArchive ar{os.get()};
          ar(cereal::make_size_tag(n));
        }
      }
      buf.finish();
      return {};
    },
    [] { return std::string{}; });
  if (err)
    return err;
  auto bytes = std::as_bytes(std::span<const E>{x.data(), x.size()});
  frames.push_back(frame::view(bytes, keep_alive));
  return {};
}

/// Reads a split array: the size tag from frame 0, the elements from frame
/// 1, adopting frame 1's bytes for std::vector<std::byte> when `adopt` is
/// that frame and owns them.
template <cereal_format F, class T>
caf::error cereal_decode_split(std::span<const frame> frames, frame* adopt,
                               T& out, const limits& lim,
                               const call_info& info) {
  using E = typename T::value_type;
  return guarded_frames(info, [&](size_t& frame_index) -> caf::error {
    uint64_t n = 0;
    bool swapped = false;
    if constexpr (F == cereal_format::json) {
      checked_json_archive ar{frames[0].bytes(), lim};
      uint64_t width = 0;
      ar(cereal::make_nvp("elements", n),
         cereal::make_nvp("element_bytes", width));
      ar.finish();
      if (width != sizeof(E))
        throw decode_fault{errc::frame_mismatch,
                           "the JSON head of a split array says " +
                             std::to_string(width) +
                             "-byte elements, the type's are " +
                             std::to_string(sizeof(E)) + " bytes"};
      swapped = sizeof(E) > 1 && std::endian::native != std::endian::little;
    } else {
      checked_input_archive<F == cereal_format::portable> ar{frames[0].bytes(),
                                                             lim.max_depth};
      cereal::size_type tag = 0;
      ar(tag);
      if (ar.remaining() != 0)
        throw decode_fault{errc::trailing_bytes,
                           std::to_string(ar.remaining()) +
                             " bytes follow the size tag of a split array"};
      n = tag;
      if constexpr (F == cereal_format::portable && sizeof(E) > 1)
        swapped = ar.swapped();
    }
    frame_index = 1;
    auto bytes = frames[1].bytes();
    if (bytes.size() % sizeof(E) != 0 || n != bytes.size() / sizeof(E))
      throw decode_fault{errc::frame_mismatch,
                         "the size tag says " + std::to_string(n) +
                           " elements of " + std::to_string(sizeof(E)) +
                           " bytes, the frame holds " +
                           std::to_string(bytes.size()) + " bytes"};
    // A std::string is text in cereal.json (its encoder checked it).
    if constexpr (F == cereal_format::json && std::is_same_v<T, std::string>)
      check_text({reinterpret_cast<const char*>(bytes.data()), bytes.size()},
                 false, "cereal.json", cereal_json_text_fix,
                 [](size_t i) { return "at offset " + std::to_string(i); });
    // The elements are frame 1's bytes: the allocation is bounded by
    // what arrived.
    take_elements(frames[1], adopt, out);
    if constexpr (sizeof(E) > 1) {
      if (swapped)
        for (auto& x : out) {
          auto p = reinterpret_cast<unsigned char*>(&x);
          std::reverse(p, p + sizeof(E));
        }
    }
    if constexpr (F == cereal_format::json)
      cereal_json_check_nans(out);
    return {};
  });
}

/// The JSON archives, which carry an evolving type's members by name.
template <class Archive>
inline constexpr bool json_archive =
  std::is_same_v<Archive, cereal::JSONOutputArchive> ||
  std::is_same_v<Archive, checked_json_archive>;

/// Runs cereal's `ar(field)`, turning cereal's refusals into ferry's.
template <class Archive, class Field>
void cereal_member(Archive& ar, Field&& field) {
  if constexpr (ferry_input_archive<Archive>) {
    try {
      ar(std::forward<Field>(field));
    } catch (const cereal::Exception& e) {
      throw decode_fault{errc::decode_failed,
                         std::string{"cereal: "} + e.what() +
                           "; the bytes are corrupt or hostile, or the "
                           "sender's type differs from the receiver's"};
    }
  } else {
    ar(std::forward<Field>(field));
  }
}

/// Writes or reads the evolving aggregate `x` (type_version.hpp) as an
/// object of its members by name: the reader skips members it lacks and
/// leaves those the input lacks at their defaults.
template <class Archive, class T>
void cereal_by_name(Archive& ar, T& x) {
  if constexpr (std::is_same_v<Archive, checked_json_archive>)
    ar.read_by_name();
  each_member(x, [&](auto& field, auto index) {
    constexpr auto name = member_name_c_str<T, decltype(index)::value>();
    if constexpr (std::is_same_v<Archive, checked_json_archive>) {
      if (!ar.seek(name))
        return; // the sender's version lacks it: keep the default
    }
    cereal_member(ar, cereal::make_nvp(name, field));
  });
}

} // namespace ferry::serializers::detail

namespace cereal {

/// Serializes plain aggregates field by field (ferry's aggregate
/// reflection); a refusal names the member it happened in. In cereal.json,
/// an aggregate with a version is an object of its members by name.
template <class Archive, class T>
requires ferry::serializers::detail::cereal_archive<Archive> &&
  ferry::serializers::detail::cereal_reflect<T>
void CEREAL_SERIALIZE_FUNCTION_NAME(Archive& ar, T& x) {
  if constexpr (ferry::serializers::detail::evolving<T> &&
                ferry::serializers::detail::json_archive<Archive>) {
    ferry::serializers::detail::cereal_by_name(ar, x);
    return;
  }
  ferry::serializers::detail::each_member(x, [&](auto& field, size_t) {
    // cereal's own refusals (a variant's index, say), as ferry's.
    ferry::serializers::detail::cereal_member(ar, field);
  });
}

/// std::vector<std::byte> as one block. cereal copies vectors of arithmetic
/// types in one piece but walks enums, std::byte among them, element by
/// element (one stream write per byte, 100-180 MB/s here); the block holds
/// the same bytes (size tag, then one byte per element) in both binary
/// formats, so plain cereal still reads it.
template <class A>
void CEREAL_SAVE_FUNCTION_NAME(BinaryOutputArchive& ar,
                               const std::vector<std::byte, A>& xs) {
  ar(make_size_tag(static_cast<size_type>(xs.size())));
  ar(binary_data(xs.data(), xs.size()));
}

template <class A>
void CEREAL_SAVE_FUNCTION_NAME(PortableBinaryOutputArchive& ar,
                               const std::vector<std::byte, A>& xs) {
  ar(make_size_tag(static_cast<size_type>(xs.size())));
  ar(binary_data(xs.data(), xs.size()));
}

/// cereal.json carries text: a string holding a NUL character (cereal's own
/// JSON reader cuts strings there) or bytes that are not UTF-8 is refused on
/// encode instead of arriving changed.
inline void CEREAL_SAVE_FUNCTION_NAME(JSONOutputArchive& ar,
                                      const std::string& str) {
  ferry::serializers::detail::cereal_json_check_text(str);
  ar.saveValue(str);
}

/// JSON has one NaN: any other is refused on encode (cereal_json_check_nan).
inline void CEREAL_SAVE_FUNCTION_NAME(JSONOutputArchive& ar, const double& x) {
  ferry::serializers::detail::cereal_json_check_nan(x);
  ar.saveValue(x);
}

inline void CEREAL_SAVE_FUNCTION_NAME(JSONOutputArchive& ar, const float& x) {
  ferry::serializers::detail::cereal_json_check_nan(x);
  ar.saveValue(static_cast<double>(x));
}

inline void CEREAL_SAVE_FUNCTION_NAME(JSONOutputArchive& ar,
                                      const long double& x) {
  ferry::serializers::detail::cereal_json_check_nan(x);
  ar.saveValue(x);
}

} // namespace cereal
