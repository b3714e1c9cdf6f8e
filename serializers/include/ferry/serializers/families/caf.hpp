// The `caf` family: CAF 0.17's binary serializer over `inspect`.
//
// Frame 0 holds exactly what `caf::binary_serializer` writes for the value
// (CAF's binary format: variable-length sequence sizes, integers in network
// byte order), so `caf::binary_deserializer` decodes it. ferry reads and
// writes that format with its own caf::serializer / caf::deserializer
// (one virtual call per value, like CAF's own), and its reader refuses
// sequence sizes larger than eight times the bytes left (CAF resizes byte
// sequences before reading them; eight because a std::vector<bool> packs
// eight elements per byte), size prefixes longer than 5 bytes or above
// 2^32 - 1, and nesting deeper than `limits::max_depth`.
//
// Aggregates with no `inspect` of their own are inspected field by field.
// Cannot express: std::optional, std::variant, pointers (so no shared
// identity), std::forward_list; sequences longer than 2^32 - 1 elements (CAF
// 0.17 writes 32-bit lengths). CAF 0.17 writes and reads a sequence element
// by element, a virtual call and a caf::error each. Where ferry's own walk
// reaches a std::vector of fixed-width integers, float, double or std::byte
// (the value itself, members of plain aggregates, and the standard
// containers, pairs and tuples around them: see `caf_walked`), it writes
// and reads the elements in one loop, the same bytes (`caf_flat_vector`):
// CAF's IEEE 754 packing of a value the writer accepts is the value's own
// bits, so a float or double is written as its bits in network byte order.
// Inside a type with its own `inspect`, CAF's element-wise path remains.
//
// Floating point: CAF 0.17's IEEE 754 packing carries finite normal values
// and +0.0 bit for bit; it writes -0.0 as 0, corrupts subnormals and loops
// on infinities and NaNs, so the writer refuses those (and a long double
// that is not finite, whose text CAF's reader refuses) with
// `errc::inexact_value`, and the reader refuses bits the writer never
// writes. A map or set with unique keys that repeats a key is refused
// (`errc::duplicate_key`) where ferry's walk reads it (see `caf_walked`);
// inside a type with its own `inspect`, CAF reads it and keeps the first.
//
// CAF 0.17 reads and writes a std::vector<bool> with a begin_sequence and no
// end_sequence, so a reader counting nesting by those calls would count one
// more level for every std::vector<bool> read before it (a
// std::vector<std::vector<bool>> of 200 rows was refused as nesting too
// deep). ferry ends each such sequence itself wherever its walk reaches a
// std::vector<bool> (see `caf_balanced`); the bytes stay CAF's. Inside a type
// with its own `inspect`, each std::vector<bool> still counts as one level.
//
// Actor handles (caf::actor, caf::actor_addr, caf::strong_actor_ptr,
// caf::typed_actor<...>) travel as the token of the calling thread's handle
// hook (actor_handles.hpp), a u8 kind then a u64 id, where ferry's own walk
// reaches them: the value itself, members of plain aggregates, and the
// standard containers, pairs, tuples and arrays around them (see
// `caf_walked`). Inside a type with its own `inspect`, CAF 0.17 hands the
// handle to its own code (which needs its actor registry, which ferry does
// not use, and an execution context the caf family does not have); the
// inspector there is a plain caf::serializer, so ferry cannot step in. Such
// values fail with `errc::actor_handle_unsupported`, and the registry tries
// the next family of the preference list (cereal.*, msgpack carry handles
// anywhere).
//
// A large std::vector<std::byte> value (at least `caf_split_bytes`) encoded
// with a keep-alive travels in two frames, like the cereal families' arrays
// (families/cereal.hpp): frame 0 = CAF's sequence size, frame 1 = a view of
// the bytes; concatenated they are CAF's output.
#pragma once

#include "ferry/serializers/detail/actor_handles.hpp"
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
  static constexpr const char* how =
    "CAF inspect function: add `template <class Inspector> typename "
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
    return std::is_same_v<T, std::string> ||
           std::is_same_v<T, std::u16string> ||
           std::is_same_v<T, std::u32string>;
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
concept caf_inspector = requires {
  typename Inspector::result_type;
}
&&!std::is_same_v<Inspector, caf_probe>;

/// Element types whose vectors ferry writes and reads in one loop, the
/// same bytes as CAF's walk: fixed-width integers, float, double, std::byte.
template <class E>
inline constexpr bool caf_flat_element =
  std::is_same_v<E, int8_t> || std::is_same_v<E, uint8_t> ||
  std::is_same_v<E, int16_t> || std::is_same_v<E, uint16_t> ||
  std::is_same_v<E, int32_t> || std::is_same_v<E, uint32_t> ||
  std::is_same_v<E, int64_t> || std::is_same_v<E, uint64_t> ||
  std::is_same_v<E, float> || std::is_same_v<E, double> ||
  std::is_same_v<E, std::byte>;

template <class T>
inline constexpr bool caf_flat_vector = false;

template <class E>
inline constexpr bool caf_flat_vector<std::vector<E>> = caf_flat_element<E>;

class checked_caf_source;
class checked_caf_sink;
caf::error caf_load_bytes(checked_caf_source& source,
                          std::vector<std::byte>& xs);

/// Writes `xs` as CAF does (size, then each element in network byte order;
/// a float or double refused as `apply_impl` refuses it), in one loop.
template <class E>
caf::error caf_save_numbers(checked_caf_sink& sink, const std::vector<E>& xs);

/// Reads what `caf_save_numbers` writes (and CAF's walk), refusing a size
/// the bytes left cannot hold and floating-point bits the writer never
/// writes.
template <class E>
caf::error caf_load_numbers(checked_caf_source& source, std::vector<E>& xs);

// The typed reads and writes of CAF 0.17's data_processor (one for each
// built-in type), which checked_caf_source and checked_caf_sink both
// override; families/caf.cpp defines them. Undefined after the two classes.
#define FERRY_CAF_APPLY_IMPL_OVERRIDES                                         \
  caf::error apply_impl(int8_t&) override;                                     \
  caf::error apply_impl(uint8_t&) override;                                    \
  caf::error apply_impl(int16_t&) override;                                    \
  caf::error apply_impl(uint16_t&) override;                                   \
  caf::error apply_impl(int32_t&) override;                                    \
  caf::error apply_impl(uint32_t&) override;                                   \
  caf::error apply_impl(int64_t&) override;                                    \
  caf::error apply_impl(uint64_t&) override;                                   \
  caf::error apply_impl(float&) override;                                      \
  caf::error apply_impl(double&) override;                                     \
  caf::error apply_impl(long double&) override;                                \
  caf::error apply_impl(std::string&) override;                                \
  caf::error apply_impl(std::u16string&) override;                             \
  caf::error apply_impl(std::u32string&) override;

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

  size_t remaining() const noexcept { return in_.size() - pos_; }

  size_t position() const noexcept { return pos_; }

protected:
  FERRY_CAF_APPLY_IMPL_OVERRIDES

private:
  friend caf::error caf_load_bytes(checked_caf_source& source,
                                   std::vector<std::byte>& xs);
  template <class E>
  friend caf::error caf_load_numbers(checked_caf_source& source,
                                     std::vector<E>& xs);

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
  FERRY_CAF_APPLY_IMPL_OVERRIDES

private:
  template <class E>
  friend caf::error caf_save_numbers(checked_caf_sink& sink,
                                     const std::vector<E>& xs);

  template <class T>
  caf::error put(T x);

  std::vector<std::byte>& out_;
};

#undef FERRY_CAF_APPLY_IMPL_OVERRIDES

/// Returns the error for element `index` of a map or set repeating a key.
caf::error caf_duplicate_key(size_t index);

/// Returns `err` with member `index` (of type `member`) of `owner` appended
/// to its text, when it is one of ferry's (see `note_member`).
caf::error caf_in_member(caf::error err, const std::type_info& owner,
                         size_t index, const std::type_info& member);

/// Returns CAF's error as a ferry error naming the family and type. An error
/// of another category (a type's inspect returning the store's error, say)
/// is returned as it is, as cereal's registered error exceptions are.
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
                            std::vector<std::byte>& out, const call_info& info);

/// Whether ferry walks T itself before CAF sees it: T is or holds, in
/// standard containers, pairs, tuples or arrays, a std::vector<bool> (CAF
/// leaves a sequence open for it), an actor handle (CAF would hand it to
/// its actor registry; ferry writes the hook's token instead), or a map or
/// set with unique keys (CAF keeps the first of a key given twice; ferry
/// refuses it). Aggregates walk their own fields; other types inspect
/// themselves.
template <class T>
constexpr bool caf_walked();

template <class Tuple, size_t... Is>
constexpr bool caf_any_walked(std::index_sequence<Is...>) {
  return (caf_walked<std::tuple_element_t<Is, Tuple>>() || ...);
}

template <class T>
constexpr bool caf_walked() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, std::vector<bool>> || is_actor_handle_v<U> ||
                is_unique_keyed_v<U> || caf_flat_vector<U>)
    return true;
  else if constexpr (is_sequence_v<U> || is_std_array<U>::value)
    return caf_walked<typename U::value_type>();
  else if constexpr (is_map_v<U>)
    return caf_walked<typename U::key_type>() ||
           caf_walked<typename U::mapped_type>();
  else if constexpr (is_instance_v<U, std::pair>)
    return caf_walked<typename U::first_type>() ||
           caf_walked<typename U::second_type>();
  else if constexpr (is_instance_v<U, std::tuple>)
    return caf_any_walked<U>(std::make_index_sequence<std::tuple_size_v<U>>{});
  else
    return false;
}

/// A value that ferry walks (`caf_walked`), as ferry hands it to a CAF
/// inspector: its `inspect` ends the sequence CAF leaves open for each
/// std::vector<bool>, writes each actor handle as its token, and walks the
/// standard containers around them in CAF's own format.
template <class T>
struct caf_balanced {
  T& x;
};

/// Returns `x` as ferry hands it to a CAF inspector: `x` itself, or wrapped
/// in `caf_balanced` when ferry walks its type.
template <class T>
decltype(auto) caf_balance(T& x) {
  if constexpr (caf_walked<T>())
    return caf_balanced<T>{x};
  else
    return (x);
}

/// Writes or reads the actor handle `x` as its token: a u8 kind, then a
/// u64 id (actor_handles.hpp).
template <class Processor, class T>
caf::error caf_apply_handle(Processor& f, T& x) {
  if constexpr (Processor::reads_state) {
    auto token = token_of(to_strong(x), typeid(T));
    if (!token)
      return std::move(token.error());
    return f(token->kind, token->id);
  } else {
    handle_token token;
    if (auto err = f(token.kind, token.id))
      return err;
    auto ptr = handle_of(token, typeid(T));
    if (!ptr)
      return std::move(ptr.error());
    x = from_strong<T>(std::move(*ptr));
    return {};
  }
}

/// Applies the CAF serializer or deserializer `f` to `x` as CAF does (the
/// same calls, so the same bytes), plus an end_sequence after each
/// std::vector<bool>; actor handles become their tokens.
template <class Processor, class T>
caf::error caf_apply_balanced(Processor& f, T& x) {
  if constexpr (is_actor_handle_v<T>) {
    return caf_apply_handle(f, x);
  } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
    if (auto err = f(x))
      return err;
    return f.end_sequence();
  } else if constexpr (caf_flat_vector<T>) {
    // In one loop where the processor is ferry's own (the inspector CAF
    // hands over is the base class), else CAF's walk.
    if constexpr (Processor::reads_state) {
      if (typeid(f) == typeid(checked_caf_sink))
        return caf_save_numbers(static_cast<checked_caf_sink&>(f), x);
    } else {
      if (typeid(f) == typeid(checked_caf_source))
        return caf_load_numbers(static_cast<checked_caf_source&>(f), x);
    }
    return f(x);
  } else if constexpr (is_std_array<T>::value) {
    for (auto& y : x)
      if (auto err = f(caf_balance(y)))
        return err;
    return {};
  } else if constexpr (is_instance_v<T, std::pair>) {
    return f(caf_balance(x.first), caf_balance(x.second));
  } else if constexpr (is_instance_v<T, std::tuple>) {
    return std::apply([&](auto&... ys) { return f(caf_balance(ys)...); }, x);
  } else if constexpr (Processor::reads_state) {
    // Writing: the size, then each element (casting away the constness of
    // map keys and set elements, as CAF's own loop does).
    auto n = x.size();
    if (auto err = f.begin_sequence(n))
      return err;
    for (auto& y : x) {
      caf::error err;
      if constexpr (is_map_v<T>)
        err = f(caf_balance(const_cast<typename T::key_type&>(y.first)),
                caf_balance(y.second));
      else
        err = f(caf_balance(const_cast<typename T::value_type&>(y)));
      if (err)
        return err;
    }
    return f.end_sequence();
  } else {
    // Reading, as CAF's fill_range: clear, then insert each element at the
    // end; a map or set with unique keys refuses a key given twice.
    size_t n = 0;
    if (auto err = f.begin_sequence(n))
      return err;
    x.clear();
    for (size_t i = 0; i < n; ++i) {
      auto before = x.size();
      if constexpr (is_map_v<T>) {
        typename T::key_type key;
        typename T::mapped_type value;
        if (auto err = f(caf_balance(key), caf_balance(value)))
          return err;
        x.insert(x.end(),
                 typename T::value_type{std::move(key), std::move(value)});
      } else {
        typename T::value_type y;
        if (auto err = f(caf_balance(y)))
          return err;
        x.insert(x.end(), std::move(y));
      }
      if (is_unique_keyed_v<T> && x.size() == before)
        return caf_duplicate_key(i);
    }
    return f.end_sequence();
  }
}

template <class Inspector, class T>
requires caf_inspector<Inspector>
typename Inspector::result_type inspect(Inspector& f, caf_balanced<T>& x) {
  if constexpr (std::is_same_v<typename Inspector::result_type, caf::error>)
    return caf_apply_balanced(f, x.x);
  else
    return f(x.x); // e.g. to_string: nothing to balance
}

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
        err = sink(caf_balance(const_cast<T&>(x)));
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
        err = source(caf_balance(out));
      offset = source.position();
      if (err)
        return from_caf_error(err, info, offset);
      if (source.remaining() != 0)
        return make_error(errc::trailing_bytes,
                          describe(info) + " (frame 0, offset " +
                            std::to_string(offset) +
                            "): " + std::to_string(source.remaining()) +
                            " bytes follow the value");
      return {};
    },
    [&] { return " (frame 0, offset " + std::to_string(offset) + ")"; });
}

} // namespace ferry::serializers::detail

namespace caf {

/// Inspects plain aggregates field by field (ferry's aggregate reflection);
/// an error names the member it happened in.
template <class Inspector, class T>
requires ferry::serializers::detail::caf_inspector<Inspector> &&
  ferry::serializers::detail::caf_reflect<T>
typename Inspector::result_type inspect(Inspector& f, T& x) {
  return ferry::serializers::visit_fields(x, [&](auto&... fields) {
    if (ferry::serializers::detail::tracing()) {
      [[maybe_unused]] size_t index = 0;
      (ferry::serializers::detail::trace_member(typeid(T), index++,
                                                typeid(fields)),
       ...);
    }
    if constexpr (std::is_same_v<typename Inspector::result_type, error>) {
      // One field at a time: the same calls, so the same bytes.
      error err;
      [[maybe_unused]] size_t index = 0;
      [[maybe_unused]] auto one = [&](auto& field) {
        if (err)
          return;
        if (auto e = f(ferry::serializers::detail::caf_balance(field)))
          err = ferry::serializers::detail::caf_in_member(
            std::move(e), typeid(T), index, typeid(field));
        ++index;
      };
      (one(fields), ...);
      return err;
    } else {
      return f(ferry::serializers::detail::caf_balance(fields)...);
    }
  });
}

} // namespace caf
