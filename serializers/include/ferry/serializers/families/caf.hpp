// The `caf` family: CAF 0.17's binary serializer over `inspect`.
//
// Frame 0 holds exactly what `caf::binary_serializer` writes for the value
// (CAF's binary format: variable-length sequence sizes, integers in network
// byte order), so `caf::binary_deserializer` decodes it. ferry reads and
// writes that format with its own caf::serializer / caf::deserializer
// (one virtual call per value, like CAF's own), and its reader refuses
// sequence sizes larger than eight times the bytes left (CAF resizes byte
// sequences before reading them; eight because a std::vector<bool> packs
// eight elements per byte), size prefixes longer than 5 bytes and nesting
// deeper than `limits::max_depth`.
//
// Aggregates with no `inspect` of their own are inspected field by field.
// Cannot express: std::optional, std::variant, pointers (so no shared
// identity), std::forward_list; sequences longer than 2^32 - 1 elements (CAF
// 0.17 writes 32-bit lengths). Element-wise sequences are slow in CAF 0.17
// (a virtual call per element); bulk bytes belong in std::string or
// std::vector<char>. A std::vector<std::byte> *value* is written as one
// block in the same format (CAF itself walks std::byte, an enum, element by
// element: one virtual call and one caf::error per byte); a
// std::vector<std::byte> *member* of an inspected type still goes element by
// element, because which path CAF's data_processor takes is a trait every
// translation unit would have to agree on. Subnormal floating-point values are refused on encode:
// CAF 0.17's IEEE 754 packing corrupts them.
//
// A large std::vector<std::byte> value (at least `caf_split_bytes`) encoded
// with a keep-alive travels in two frames, like the cereal families' arrays
// (families/cereal.hpp): frame 0 = CAF's sequence size, frame 1 = a view of
// the bytes; concatenated they are CAF's output.
#pragma once

#include "ferry/serializers/detail/capability.hpp"
#include "ferry/serializers/detail/codec_common.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/deserializer.hpp>
#include <caf/detail/type_traits.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/serializer_impl.hpp>

namespace ferry::serializers::detail {

struct caf_policy {
  static constexpr const char* name = "caf";
  static constexpr const char* how
    = "CAF inspect function: add `template <class Inspector> typename "
      "Inspector::result_type inspect(Inspector& f, T& x)`, make it a plain "
      "aggregate, or register_serializer<T> a stand-in";
  static constexpr bool enums = true;
  static constexpr bool optionals = false;
  static constexpr bool variants = false;
  static constexpr bool separate_frames = true;

  template <class T>
  static constexpr bool own() {
    return has_own_inspect<T>;
  }

  /// CAF 0.17's data_processor silently skips allowed-unsafe types: a value
  /// of such a type (or holding one) would arrive default-constructed.
  template <class T>
  static constexpr bool skipped() {
    return caf::allowed_unsafe_message_type<T>::value;
  }

  template <class T>
  static constexpr bool scalar() {
    return true;
  }

  template <class T>
  static constexpr bool string() {
    return std::is_same_v<T, std::string> || std::is_same_v<T, std::u16string>
           || std::is_same_v<T, std::u32string>;
  }

  template <class T>
  static constexpr bool sequence() {
    return !is_instance_v<T, std::forward_list>;
  }

  template <class T>
  static constexpr bool pointer() {
    return false;
  }

  template <class T>
  static constexpr bool leaf() {
    if constexpr (is_reflectable_v<T>)
      return false;
    else
      return caf::detail::is_serializable<T>::value;
  }
};

// `if constexpr` so that `field_types<T>` is only instantiated for
// aggregates: `&&` in a variable template instantiates every operand, and
// field_types of a non-aggregate (e.g. caf::error, reached through CAF's own
// unqualified `inspect` calls) is a hard error, not a substitution failure.
template <class T>
constexpr bool caf_reflect_impl() {
  if constexpr (!is_reflectable_v<T>)
    return false;
  else if constexpr (has_own_inspect<T>)
    return false;
  else
    return all_ok<caf_policy, field_types<T>>();
}

template <class T>
concept caf_reflect = caf_reflect_impl<T>();

template <class Inspector>
concept caf_inspector = requires { typename Inspector::result_type; }
                        && !std::is_same_v<Inspector, caf_probe>;

class checked_caf_source;
caf::error caf_load_bytes(checked_caf_source& source,
                          std::vector<std::byte>& xs);

/// A caf::deserializer reading CAF's binary format (what
/// caf::binary_deserializer reads), with size and depth checks.
class checked_caf_source final : public caf::deserializer {
public:
  checked_caf_source(std::span<const std::byte> in, uint32_t max_depth);

  caf::error begin_object(uint16_t& typenr, std::string& name) override;
  caf::error end_object() override;
  caf::error begin_sequence(size_t& num) override;
  caf::error end_sequence() override;
  caf::error apply_raw(size_t num_bytes, void* data) override;

  size_t remaining() const noexcept {
    return in_.size() - pos_;
  }

  size_t position() const noexcept {
    return pos_;
  }

protected:
  caf::error apply_impl(int8_t&) override;
  caf::error apply_impl(uint8_t&) override;
  caf::error apply_impl(int16_t&) override;
  caf::error apply_impl(uint16_t&) override;
  caf::error apply_impl(int32_t&) override;
  caf::error apply_impl(uint32_t&) override;
  caf::error apply_impl(int64_t&) override;
  caf::error apply_impl(uint64_t&) override;
  caf::error apply_impl(float&) override;
  caf::error apply_impl(double&) override;
  caf::error apply_impl(long double&) override;
  caf::error apply_impl(std::string&) override;
  caf::error apply_impl(std::u16string&) override;
  caf::error apply_impl(std::u32string&) override;

private:
  friend caf::error caf_load_bytes(checked_caf_source& source,
                                   std::vector<std::byte>& xs);

  template <class T>
  caf::error get(T& x);

  std::span<const std::byte> in_;
  size_t pos_ = 0;
  uint32_t depth_ = 0;
  uint32_t max_depth_;
};

/// A caf::serializer writing CAF's binary format (what caf::serializer_impl
/// writes), refusing subnormal floating-point values: CAF
/// 0.17's IEEE 754 packing turns them into unrelated numbers (4.9e-324
/// arrives as -1.6e+293), so they must not leave silently corrupted.
class checked_caf_sink final : public caf::serializer {
public:
  explicit checked_caf_sink(std::vector<std::byte>& out);

  caf::error begin_object(uint16_t& typenr, std::string& name) override;
  caf::error end_object() override;
  caf::error begin_sequence(size_t& num) override;
  caf::error end_sequence() override;
  caf::error apply_raw(size_t num_bytes, void* data) override;

protected:
  caf::error apply_impl(int8_t&) override;
  caf::error apply_impl(uint8_t&) override;
  caf::error apply_impl(int16_t&) override;
  caf::error apply_impl(uint16_t&) override;
  caf::error apply_impl(int32_t&) override;
  caf::error apply_impl(uint32_t&) override;
  caf::error apply_impl(int64_t&) override;
  caf::error apply_impl(uint64_t&) override;
  caf::error apply_impl(float&) override;
  caf::error apply_impl(double&) override;
  caf::error apply_impl(long double&) override;
  caf::error apply_impl(std::string&) override;
  caf::error apply_impl(std::u16string&) override;
  caf::error apply_impl(std::u32string&) override;

private:
  template <class T>
  caf::error put(T x);

  std::vector<std::byte>& out_;
};

/// Returns CAF's error as a ferry error naming the family and type.
caf::error from_caf_error(const caf::error& err, const call_info& info,
                          size_t offset);

/// Writes what CAF writes for a byte sequence (size, then the bytes) with
/// one block copy.
caf::error caf_save_bytes(checked_caf_sink& sink,
                          const std::vector<std::byte>& xs);

/// Reads what CAF writes for a byte sequence, the bytes as one block.
caf::error caf_load_bytes(checked_caf_source& source,
                          std::vector<std::byte>& xs);

/// std::vector<std::byte> values of at least this many bytes are split
/// (see above).
inline constexpr size_t caf_split_bytes = 64 * 1024;

/// Whether `x` is a byte vector large enough to split.
template <class T>
bool caf_should_split(const T& x) {
  if constexpr (std::is_same_v<T, std::vector<std::byte>>)
    return x.size() >= caf_split_bytes && x.size() <= UINT32_MAX;
  else
    return false;
}

/// Writes the two frames of a split byte vector: `head` receives CAF's
/// sequence size, `frames` gets the view of the bytes appended.
caf::error caf_encode_split(const std::vector<std::byte>& x,
                            std::vector<std::byte>& head,
                            std::vector<frame>& frames,
                            const std::shared_ptr<const void>& keep_alive,
                            const call_info& info);

/// Reads a split byte vector: the size from frame 0, the bytes from frame 1
/// (adopted when `adopt` is frame 1 and owns its bytes).
caf::error caf_decode_split(std::span<const frame> frames, frame* adopt,
                            std::vector<std::byte>& out,
                            const call_info& info);

template <class T>
caf::error caf_encode(const T& x, std::vector<std::byte>& out,
                      const call_info& info) {
  return guarded(
    info,
    [&]() -> caf::error {
      out.clear();
      checked_caf_sink sink{out};
      caf::error err;
      if constexpr (std::is_same_v<T, std::vector<std::byte>>)
        err = caf_save_bytes(sink, x);
      else
        err = sink(const_cast<T&>(x));
      if (err)
        return from_caf_error(err, info, out.size());
      return {};
    },
    [] { return std::string{}; });
}

template <class T>
caf::error caf_decode(std::span<const std::byte> in, T& out, const limits& lim,
                      const call_info& info) {
  size_t offset = 0;
  return guarded(
    info,
    [&]() -> caf::error {
      checked_caf_source source{in, lim.max_depth};
      caf::error err;
      if constexpr (std::is_same_v<T, std::vector<std::byte>>)
        err = caf_load_bytes(source, out);
      else
        err = source(out);
      offset = source.position();
      if (err)
        return from_caf_error(err, info, offset);
      if (source.remaining() != 0)
        return make_error(errc::trailing_bytes,
                          describe(info) + " (frame 0, offset "
                            + std::to_string(offset)
                            + "): " + std::to_string(source.remaining())
                            + " bytes follow the value");
      return {};
    },
    [&] { return " (frame 0, offset " + std::to_string(offset) + ")"; });
}

} // namespace ferry::serializers::detail

namespace caf {

/// Inspects plain aggregates field by field (ferry's aggregate reflection).
template <class Inspector, class T>
  requires ferry::serializers::detail::caf_inspector<Inspector>
           && ferry::serializers::detail::caf_reflect<T>
typename Inspector::result_type inspect(Inspector& f, T& x) {
  return ferry::serializers::visit_fields(x, [&](auto&... fields) {
    if (ferry::serializers::detail::tracing()) {
      [[maybe_unused]] size_t index = 0;
      (ferry::serializers::detail::trace_member(typeid(T), index++,
                                                typeid(fields)),
       ...);
    }
    return f(fields...);
  });
}

} // namespace caf
