// Member names of plain aggregates, read at compile time.
//
// `member_names<T>()` returns the names of the fields of the aggregate `T`
// in declaration order, as the compiler spells them, with no user code:
// each field's address inside an object that is declared but never defined
// becomes a template argument, and the compiler's own name of that
// function instance (`__PRETTY_FUNCTION__`) ends with the member's name.
// Works with GCC and Clang, the compilers ferry builds with; every name is
// checked to be a non-empty identifier at compile time, so a compiler that
// prints something else fails the build instead of yielding wrong names.
//
// The names describe a type's shape (shape.hpp): two builds of one program
// compare them to find the member that differs.
//
// Thread-safety: everything here is compile-time or pure.
//
//     struct point { int x; double y; };
//     static_assert(ferry::serializers::member_names<point>()[1] == "y");
#pragma once

#include "ferry/serializers/reflect.hpp"

#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>

namespace ferry::serializers {

namespace detail {

/// Holds `T` so that its fields are subobjects of a named object.
template <class T>
struct name_probe_holder {
  T value;
};

// Clang warns of a variable template declared and not defined, or of one
// with internal linkage (a type in an anonymous namespace): by design here.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wundefined-var-template"
#pragma clang diagnostic ignored "-Wundefined-internal"
#endif

/// Declared only: never defined, never read; only its fields' addresses are
/// taken, in constant expressions.
template <class T>
extern const name_probe_holder<T> name_probe;

/// Wraps a field's address so that the compiler prints it with its path.
template <class F>
struct field_address {
  const F* ptr;
};

template <std::size_t I, class... Fs>
constexpr auto nth_address(const Fs&... fs) {
  return std::get<I>(
    std::tuple<field_address<Fs>...>{field_address<Fs>{&fs}...});
}

template <class T, std::size_t I>
constexpr auto address_of_field() {
  return visit_fields(name_probe<T>.value,
                      [](const auto&... fs) { return nth_address<I>(fs...); });
}
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

template <auto Address>
consteval std::string_view spelled() {
  return __PRETTY_FUNCTION__;
}

constexpr bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_';
}

/// The member name at the end of the address in `text`: the identifier just
/// before the '}' that closes the template argument, the last '}' of the
/// text (GCC prints `{(& name_probe<T>.holder<T>::value.T::x)}; ...]`, Clang
/// `[Address = {&name_probe.value.x}]`; a type in an anonymous namespace
/// adds braces earlier, `{anonymous}::T`, never later).
consteval std::string_view member_name_in(std::string_view text) {
  auto start = text.find("Address = ");
  if (start == std::string_view::npos)
    return {};
  auto end = text.rfind('}');
  if (end == std::string_view::npos || end < start)
    return {};
  while (end > start && text[end - 1] == ')')
    --end;
  auto first = end;
  while (first > start && is_identifier_char(text[first - 1]))
    --first;
  return text.substr(first, end - first);
}

template <class T, std::size_t I>
consteval std::string_view member_name() {
  constexpr auto name = member_name_in(spelled<address_of_field<T, I>()>());
  static_assert(!name.empty() && !(name[0] >= '0' && name[0] <= '9'),
                "ferry::serializers: cannot read member names with this "
                "compiler (ferry supports GCC and Clang)");
  return name;
}

template <class T, std::size_t... Is>
consteval auto member_name_array(std::index_sequence<Is...>) {
  return std::array<std::string_view, sizeof...(Is)>{member_name<T, Is>()...};
}

/// Member `I`'s name as a NUL-terminated string with static storage (for
/// libraries that take `const char*` names).
template <class T, std::size_t I>
struct member_name_text {
  static constexpr std::string_view name = member_name<T, I>();
  static constexpr auto text = [] {
    std::array<char, name.size() + 1> result{};
    for (std::size_t i = 0; i < name.size(); ++i)
      result[i] = name[i];
    return result;
  }();
};

} // namespace detail

/// Returns the name of field `I` of the aggregate `T` as a NUL-terminated
/// string with static storage. @pre `is_reflectable_v<T>`
template <class T, std::size_t I>
constexpr const char* member_name_c_str() {
  return detail::member_name_text<T, I>::text.data();
}

/// Returns the names of the fields of the aggregate `T` in declaration
/// order. @pre `is_reflectable_v<T>`
template <class T>
consteval auto member_names() {
  static_assert(is_reflectable_v<T>, "ferry: member_names needs an aggregate");
  return detail::member_name_array<T>(
    std::make_index_sequence<field_count<T>()>{});
}

} // namespace ferry::serializers
