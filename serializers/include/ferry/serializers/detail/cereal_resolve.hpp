// Reading an evolving record that another build wrote in cereal's binary
// formats. Not API.
//
// cereal.binary and cereal.portable write a record's members in order and
// without names, so a reader whose version of the type has other members
// cannot find them in the bytes alone. The sender's hello carries the shape
// it writes each type with (shape.hpp); when that shape differs from this
// build's, the decoder walks the bytes by the writer's shape
// (`codec_scope::writer`, filled from `decode_options::writer_shapes`):
// - a writer member this build's type has is read into it; numbers are read
//   at the writer's width and must fit the reader's exactly (else
//   `inexact_value`), lists, sets, maps, optionals and enums element by
//   element, records recursively;
// - a writer member this build lacks is skipped by its shape;
// - a member the writer lacks keeps the value the type's default
//   constructor gives it.
// The bytes stay cereal's own: the writer writes as always. The writer's
// shape is untrusted: a shape the reader cannot follow, a member named twice
// or bytes that do not match it give a typed `decode_fault`, never a wrong
// value, and a walk may take at most 8 steps per input byte plus a fixed
// slack (so a shape of many values without bytes, repeated in a list,
// cannot spin). Which shapes bridge is decided beforehand by
// `shapes_bridge`.
//
// Thread-safety: pure functions of their arguments and the calling thread's
// scope.
#pragma once

#include "ferry/serializers/detail/cereal_archive.hpp"
#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/detail/exact.hpp"
#include "ferry/serializers/detail/member_at.hpp"
#include "ferry/serializers/detail/scope.hpp"
#include "ferry/serializers/detail/shape_tree.hpp"
#include "ferry/serializers/member_names.hpp"
#include "ferry/serializers/shape.hpp"
#include "ferry/serializers/type_version.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <utility>

namespace ferry::serializers::detail {

/// Runs cereal's `ar(field)`, turning cereal's refusals into ferry's
/// (families/cereal.hpp).
template <class Archive, class Field>
void cereal_member(Archive& ar, Field&& field);

/// This build's shape of `T`, made once.
template <class T>
const std::string& own_shape() {
  static const std::string result = shape_of<T>();
  return result;
}

/// Throws the refusal of a value of the writer's shape `writer` that the
/// reader's type, of shape `reader`, cannot be read from.
[[noreturn]] void refuse_writer_shape(std::string_view writer,
                                      std::string_view reader);

/// Throws the refusal of a writer's member of shape `writer` that ferry
/// cannot skip.
[[noreturn]] void refuse_skip(std::string_view writer);

/// Skips one value of the writer's shape `w`.
template <bool P>
void skip_shape(checked_input_archive<P>& ar, const shape_node& w) {
  ar.shape_step();
  if (w.record) {
    for (auto& field : w.fields)
      skip_shape(ar, field.shape);
    return;
  }
  // Runs `one` `n` times; a value that took no bytes (an empty record, say)
  // takes none every time, so the loop ends there.
  auto repeat = [&ar](uint64_t n, auto&& one) {
    for (uint64_t i = 0; i < n; ++i) {
      auto before = ar.position();
      one();
      if (ar.position() == before)
        return;
    }
  };
  auto size_tag = [&ar] {
    cereal::size_type n = 0;
    ar(cereal::make_size_tag(n));
    return static_cast<uint64_t>(n);
  };
  auto& head = w.head;
  if (head == "tuple" || head == "pair") {
    for (auto& arg : w.args)
      skip_shape(ar, arg);
  } else if (w.args.empty()) {
    if (head == "bool") {
      bool b = false;
      ar(b);
    } else if (auto size = binary_scalar_size(head); size != 0) {
      ar.skip_bytes(size);
    } else if (auto width = binary_string_width(head); width != 0) {
      ar.skip_bytes(size_tag() * width);
    } else {
      refuse_skip(w.text);
    }
  } else if (head == "list" || head == "set" || head == "multiset") {
    repeat(size_tag(), [&] { skip_shape(ar, w.args[0]); });
  } else if ((head == "map" || head == "multimap") && w.args.size() == 2) {
    repeat(size_tag(), [&] {
      skip_shape(ar, w.args[0]);
      skip_shape(ar, w.args[1]);
    });
  } else if (head == "array" && w.args.size() == 2) {
    auto digits = w.args[1].head;
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string_view::npos)
      refuse_skip(w.text);
    uint64_t n = 0;
    for (auto c : digits)
      n = n * 10 + static_cast<uint64_t>(c - '0');
    repeat(n, [&] { skip_shape(ar, w.args[0]); });
  } else if (head == "opt" || head == "enum") {
    bool empty = false;
    if (head == "opt")
      ar(empty);
    if (!empty)
      skip_shape(ar, w.args[0]);
  } else if (head == "variant") {
    int32_t index = 0;
    ar(index);
    if (index < 0 || static_cast<size_t>(index) >= w.args.size())
      throw decode_fault{errc::malformed_frame,
                         "a variant's index " + std::to_string(index) +
                           " where the writer's shape " + std::string{w.text} +
                           " has " + std::to_string(w.args.size()) +
                           " alternatives"};
    skip_shape(ar, w.args[static_cast<size_t>(index)]);
  } else {
    refuse_skip(w.text);
  }
}

template <bool P, class T>
void read_as(checked_input_archive<P>& ar, T& x, const shape_node& w);

/// Reads the evolving record `x` from bytes written with the record shape
/// `w`: member by member in the writer's order (see the file comment).
template <bool P, class T>
void read_record(checked_input_archive<P>& ar, T& x, const shape_node& w) {
  constexpr auto names = member_names<T>();
  std::array<bool, names.size()> seen{};
  ar.enter();
  for (auto& member : w.fields) {
    auto name = member.name;
    auto& shape = member.shape;
    size_t index = 0;
    while (index < names.size() && names[index] != name)
      ++index;
    if (index == names.size()) {
      skip_shape(ar, shape); // a member of the writer's version only
      continue;
    }
    if (seen[index])
      throw decode_fault{errc::duplicate_key,
                         "the sender's shape of " + type_label<T>() +
                           " names member '" + std::string{name} + "' twice"};
    seen[index] = true;
    with_member(x, index, [&](auto& field) { read_as(ar, field, shape); });
  }
  ar.leave();
}

/// Reads an integer written with the scalar shape `w` into `x`.
template <bool P, class T>
void read_integer(checked_input_archive<P>& ar, T& x, const shape_node& w) {
  if (!is_integer_shape(w.head))
    refuse_writer_shape(w.text, own_shape<T>());
  auto load = [&ar]<class I>(I value) {
    ar.template load_data<sizeof(I)>(&value, sizeof(I));
    return value;
  };
  auto assign = [&x, &w](auto value) {
    if (!std::in_range<T>(value))
      throw decode_fault{errc::inexact_value,
                         inexact_text("the value " + std::to_string(value) +
                                        " (written as " + std::string{w.head} +
                                        ")",
                                      own_shape<T>().c_str())};
    x = static_cast<T>(value);
  };
  auto size = binary_scalar_size(w.head);
  if (w.head[0] == 'i')
    assign(size == 1   ? int64_t{load(int8_t{})}
           : size == 2 ? int64_t{load(int16_t{})}
           : size == 4 ? int64_t{load(int32_t{})}
                       : load(int64_t{}));
  else
    assign(size == 1   ? uint64_t{load(uint8_t{})}
           : size == 2 ? uint64_t{load(uint16_t{})}
           : size == 4 ? uint64_t{load(uint32_t{})}
                       : load(uint64_t{}));
}

/// Reads a float or double written with the scalar shape `w` into `x`.
template <bool P, class T>
void read_float(checked_input_archive<P>& ar, T& x, const shape_node& w) {
  if (w.head == "f32") {
    float value = 0;
    ar(value);
    if constexpr (std::is_same_v<T, double>)
      x = exact_widen(value);
    else
      x = value;
  } else if (w.head == "f64") {
    double value = 0;
    ar(value);
    if constexpr (std::is_same_v<T, float>) {
      auto narrow = exact_narrow(value);
      if (!narrow)
        throw decode_fault{errc::inexact_value,
                           inexact_text("the value " + std::to_string(value) +
                                          " (written as f64)",
                                        "f32")};
      x = *narrow;
    } else {
      x = value;
    }
  } else {
    refuse_writer_shape(w.text, own_shape<T>());
  }
}

template <class T>
inline constexpr bool is_character_v =
  std::is_same_v<T, char> || std::is_same_v<T, wchar_t> ||
  std::is_same_v<T, char8_t> || std::is_same_v<T, char16_t> ||
  std::is_same_v<T, char32_t>;

/// Reads `x` from bytes written with shape `w` (see the file comment).
template <bool P, class T>
void read_as(checked_input_archive<P>& ar, T& x, const shape_node& w) {
  ar.shape_step();
  if (w.text == own_shape<T>()) {
    cereal_member(ar, x);
    return;
  }
  auto expect = [&w](std::string_view head, size_t args) {
    if (w.head != head || w.args.size() != args)
      refuse_writer_shape(w.text, own_shape<T>());
  };
  auto size_tag = [&ar] {
    cereal::size_type n = 0;
    ar(cereal::make_size_tag(n));
    return static_cast<size_t>(n);
  };
  if constexpr (evolving<T>) {
    if (!w.record)
      refuse_writer_shape(w.text, own_shape<T>());
    read_record(ar, x, w);
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                       !is_character_v<T>) {
    read_integer(ar, x, w);
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    read_float(ar, x, w);
  } else if constexpr (std::is_enum_v<T> && !std::is_same_v<T, std::byte>) {
    expect("enum", 1);
    std::underlying_type_t<T> value{};
    read_as(ar, value, w.args[0]);
    x = static_cast<T>(value);
  } else if constexpr (is_instance_v<T, std::optional>) {
    expect("opt", 1);
    bool empty = false;
    ar(empty);
    if (empty) {
      x.reset();
    } else {
      x.emplace();
      read_as(ar, *x, w.args[0]);
    }
  } else if constexpr (is_map_v<T> && is_unique_keyed_v<T>) {
    expect("map", 2);
    auto n = size_tag();
    x.clear();
    for (size_t i = 0; i < n; ++i) {
      typename T::key_type key{};
      typename T::mapped_type value{};
      read_as(ar, key, w.args[0]);
      read_as(ar, value, w.args[1]);
      insert_unique(x, typename T::value_type{std::move(key), std::move(value)},
                    i, "a map");
    }
  } else if constexpr (is_instance_v<T, std::set> ||
                       is_instance_v<T, std::unordered_set>) {
    expect("set", 1);
    auto n = size_tag();
    x.clear();
    for (size_t i = 0; i < n; ++i) {
      typename T::key_type key{};
      read_as(ar, key, w.args[0]);
      insert_unique(x, std::move(key), i, "a set");
    }
  } else if constexpr (is_instance_v<T, std::vector> ||
                       is_instance_v<T, std::deque> ||
                       is_instance_v<T, std::list>) {
    // A list of bools has one shape in every version: equal, read above.
    if constexpr (std::is_same_v<typename T::value_type, bool>) {
      refuse_writer_shape(w.text, own_shape<T>());
    } else {
      expect("list", 1);
      auto n = size_tag();
      charge(n, sizeof(typename T::value_type), "a list");
      x.clear();
      x.resize(n);
      for (auto& element : x)
        read_as(ar, element, w.args[0]);
    }
  } else {
    refuse_writer_shape(w.text, own_shape<T>());
  }
}

/// Reads the value `x` of a payload: by the writer's shape when the call's
/// scope has one (see the file comment), else as cereal does.
template <bool P, class T>
void read_top(checked_input_archive<P>& ar, T& x) {
  if constexpr (evolving<T>) {
    if (auto scope = current_scope();
        scope != nullptr && scope->writer != nullptr) {
      ar.begin_shape_walk();
      read_as(ar, x, *scope->writer);
      return;
    }
  }
  ar(x);
}

} // namespace ferry::serializers::detail
