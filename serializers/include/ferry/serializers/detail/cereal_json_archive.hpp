// ferry's reader of cereal's JSON format: what cereal::JSONOutputArchive
// writes, read strictly. Not API.
//
// cereal's own JSONInputArchive reads names loosely (a member found by name
// anywhere in its object, or by position when the reader gives none, extra
// members ignored), reads strings as C strings (cut at a NUL character),
// takes invalid UTF-8 as it comes and casts numbers into the member's type
// (300 into a uint8_t is 44). `checked_json_archive` reads the same texts
// that cereal writes, and refuses everything else with a `decode_fault`:
//  - every object's members in the order and with the names cereal's writer
//    gives them: a name-value pair's name, else "value0", "value1", ... for
//    the unnamed ones of that object (`member_mismatch`); an object or array
//    the type did not read to its end, or one that ends early, likewise
//    (except the object of an evolving type, read by member name: any
//    order, members it lacks skipped, a name given twice refused);
//    values after the document's top-level value (`trailing_bytes`);
//  - an object where cereal writes an array, or the reverse
//    (`member_mismatch`): a value is an array exactly when the type reads a
//    size there (cereal's size tag: a sequence, set or map), an object
//    otherwise (a struct, pair, tuple, std::array, optional, pointer);
//  - strings that are not well-formed UTF-8, hold a surrogate (an escaped
//    lone surrogate included) or a NUL character (`invalid_text`);
//  - numbers the member's type cannot hold exactly: an integer out of the
//    member's range, a fraction where it is an integer, an integer or a
//    double that a float or double does not hold bit for bit
//    (`inexact_value`); a double member takes NaN and the infinities as
//    cereal writes them.
// The text is parsed once into a flat tree (`json_tree`) whose values know
// their offsets, so that errors name where they are; the tree's memory is
// charged to the decode call's allocation budget.
//
// Thread-safety: an archive belongs to the one decode call that made it.
#pragma once

#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/detail/type_traits.hpp"
#include "ferry/serializers/options.hpp"
#include "ferry/serializers/reflect.hpp"

#include <cereal/archives/json.hpp>
#include <cereal/cereal.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

namespace ferry::serializers::detail {

/// One value of a parsed JSON text, in a flat tree in document order.
struct json_node {
  enum kind_type : uint8_t {
    null_value,
    bool_value,
    negative_value, // an integer below zero (`number.i`)
    unsigned_value, // an integer of zero or more (`number.u`)
    double_value,   // any other number (`number.d`)
    string_value,
    array_value,
    object_value,
  };
  kind_type kind = null_value;
  bool flag = false;
  /// Arrays and objects: how many values they hold.
  uint32_t children = 0;
  /// Index one past this value's subtree (its next sibling, if any).
  uint32_t end = 0;
  /// A member's name (in the tree's pool); empty outside objects.
  uint32_t name_len = 0;
  uint64_t name_pos = 0;
  /// A string's bytes (in the tree's pool).
  uint32_t text_len = 0;
  uint64_t text_pos = 0;
  /// Offset in the text just past the value's last character.
  uint64_t offset = 0;
  union {
    int64_t i;
    uint64_t u;
    double d;
  } number{};
};

/// A parsed JSON text: its values and the pool holding names and strings.
struct json_tree {
  std::vector<json_node> nodes;
  std::string pool;

  std::string_view name(const json_node& x) const noexcept {
    return {pool.data() + x.name_pos, x.name_len};
  }

  std::string_view text(const json_node& x) const noexcept {
    return {pool.data() + x.text_pos, x.text_len};
  }
};

/// Returns the deepest bracket nesting of a JSON text, ignoring strings;
/// throws `decode_fault` for numbers longer than cereal ever writes
/// (families/cereal.cpp).
size_t json_depth(std::span<const std::byte> text);

/// Parses hostile `text` into a tree; throws `decode_fault` for text that is
/// not one JSON value, or nests deeper than `lim.max_depth`. Charges the
/// tree to the calling thread's decode budget.
json_tree parse_json(std::span<const std::byte> text, const limits& lim);

/// What cereal's JSON writer makes of a value of a type: an array where it
/// writes a size tag (a sequence, set or map), an object otherwise. Types
/// whose own serialization decides are `unknown` and checked as they read.
enum class json_container : uint8_t { unknown, array, object };

template <class T>
constexpr json_container json_container_of() {
  if constexpr (is_sequence_v<T> || is_map_v<T>)
    return json_container::array;
  else if constexpr (is_std_array<T>::value || is_instance_v<T, std::pair> ||
                     is_instance_v<T, std::tuple> ||
                     is_instance_v<T, std::optional> ||
                     is_instance_v<T, std::variant> || is_smart_ptr_v<T> ||
                     (is_reflectable_v<T> && !has_own_cereal<T>))
    return json_container::object;
  else
    return json_container::unknown;
}

class checked_json_archive : public cereal::InputArchive<checked_json_archive>,
                             public cereal::traits::TextArchive {
public:
  /// Parses `text` (see `parse_json`); its top level must be an object.
  checked_json_archive(std::span<const std::byte> text, const limits& lim);

  checked_json_archive(const checked_json_archive&) = delete;
  checked_json_archive& operator=(const checked_json_archive&) = delete;

  ~checked_json_archive() noexcept = default;

  /// Enters the next value, an object or an array, which the type `type`
  /// reads; refuses the other kind than `expected`.
  void startNode(const std::type_info& type, json_container expected);

  /// Leaves the value entered last; it must have been read to its end.
  void finishNode();

  /// Names the next value read (a name-value pair's name).
  void setNextName(const char* name) noexcept { next_name_ = name; }

  /// Reads the object entered last by member name (an evolving type, see
  /// type_version.hpp): members are found with `seek`, in any order, and
  /// members the type does not read are skipped; refuses a name given twice
  /// (`duplicate_key`).
  void read_by_name();

  /// Makes the member called `name` of the object read by name the next
  /// value read; false when the object has none.
  bool seek(std::string_view name);

  /// Returns the number of values of the array entered last; refuses an
  /// object there.
  void loadSize(cereal::size_type& size);

  void loadValue(bool& x);
  void loadValue(std::nullptr_t&);
  void loadValue(float& x);
  void loadValue(double& x);
  void loadValue(long double& x);
  void loadValue(std::string& x);

  template <class T>
  requires(std::is_integral_v<T> &&
           !std::is_same_v<T, bool>) void loadValue(T& x) {
    if constexpr (std::is_signed_v<T>)
      x = static_cast<T>(load_signed(INT64_C(0) + std::numeric_limits<T>::min(),
                                     std::numeric_limits<T>::max(), typeid(T)));
    else
      x =
        static_cast<T>(load_unsigned(std::numeric_limits<T>::max(), typeid(T)));
  }

  /// Checks that the document's top level holds nothing the type did not
  /// read.
  void finish();

  /// Returns the offset just past the value read last.
  size_t position() const noexcept { return position_; }

private:
  struct level {
    uint32_t node;
    uint32_t next;
    uint32_t read = 0;
    uint32_t unnamed = 0;
    bool by_name = false;
    /// The type read here (none at the top level).
    const std::type_info* type = nullptr;
    /// The type read a size here (a sequence, set or map: cereal writes an
    /// array); else it reads members (cereal writes an object).
    bool sized = false;
  };

  /// Returns the next value of the current object or array (checking its
  /// name against the one the reader gives) and moves past it.
  const json_node& next_value();

  /// Throws for a value of another kind than `expected`.
  [[noreturn]] void wrong_kind(const json_node& x, const char* expected);

  /// Throws for the object or array entered last, which is the other kind
  /// than cereal writes for what the type reads there; `member` names the
  /// member the type reads first, when known.
  [[noreturn]] void wrong_container(const char* member);

  /// Returns where the value entered last is, as a JSON pointer (RFC 6901:
  /// `/value0/tags/2`).
  std::string path() const;

  template <class F>
  F load_float(const char* type);

  int64_t load_signed(int64_t lo, int64_t hi, const std::type_info& type);
  uint64_t load_unsigned(uint64_t hi, const std::type_info& type);

  json_tree tree_;
  std::vector<level> levels_;
  const char* next_name_ = nullptr;
  size_t position_ = 0;
};

// -- cereal's JSON glue for ferry's reader (as cereal's for its own) ---------

template <class T>
void prologue(checked_json_archive&, const cereal::NameValuePair<T>&) {
}

template <class T>
void epilogue(checked_json_archive&, const cereal::NameValuePair<T>&) {
}

template <class T>
void prologue(checked_json_archive&, const cereal::DeferredData<T>&) {
}

template <class T>
void epilogue(checked_json_archive&, const cereal::DeferredData<T>&) {
}

template <class T>
void prologue(checked_json_archive&, const cereal::SizeTag<T>&) {
}

template <class T>
void epilogue(checked_json_archive&, const cereal::SizeTag<T>&) {
}

/// Values that are not numbers, strings or minimal types are objects or
/// arrays.
template <class T>
inline constexpr bool json_node_type =
  !std::is_arithmetic_v<T> &&
  !cereal::traits::has_minimal_base_class_serialization<
    T, cereal::traits::has_minimal_input_serialization,
    checked_json_archive>::value &&
  !cereal::traits::has_minimal_input_serialization<T,
                                                   checked_json_archive>::value;

template <class T>
requires json_node_type<T>
void prologue(checked_json_archive& ar, const T&) {
  ar.startNode(typeid(T), json_container_of<T>());
}

template <class T>
requires json_node_type<T>
void epilogue(checked_json_archive& ar, const T&) {
  ar.finishNode();
}

template <class T>
requires std::is_arithmetic_v<T>
void prologue(checked_json_archive&, const T&) {
}

template <class T>
requires std::is_arithmetic_v<T>
void epilogue(checked_json_archive&, const T&) {
}

inline void prologue(checked_json_archive&, const std::nullptr_t&) {
}

inline void epilogue(checked_json_archive&, const std::nullptr_t&) {
}

inline void prologue(checked_json_archive&, const std::string&) {
}

inline void epilogue(checked_json_archive&, const std::string&) {
}

template <class T>
void CEREAL_LOAD_FUNCTION_NAME(checked_json_archive& ar,
                               cereal::NameValuePair<T>& t) {
  ar.setNextName(t.name);
  ar(t.value);
}

template <class T>
requires std::is_arithmetic_v<T>
void CEREAL_LOAD_FUNCTION_NAME(checked_json_archive& ar, T& t) {
  ar.loadValue(t);
}

inline void CEREAL_LOAD_FUNCTION_NAME(checked_json_archive& ar,
                                      std::nullptr_t& t) {
  ar.loadValue(t);
}

inline void CEREAL_LOAD_FUNCTION_NAME(checked_json_archive& ar,
                                      std::string& t) {
  ar.loadValue(t);
}

template <class T>
void CEREAL_LOAD_FUNCTION_NAME(checked_json_archive& ar,
                               cereal::SizeTag<T>& t) {
  cereal::size_type size = 0;
  ar.loadSize(size);
  t.size = static_cast<std::remove_reference_t<T>>(size);
}

} // namespace ferry::serializers::detail

namespace cereal::traits::detail {

template <>
struct get_output_from_input<ferry::serializers::detail::checked_json_archive> {
  using type = cereal::JSONOutputArchive;
};

} // namespace cereal::traits::detail
