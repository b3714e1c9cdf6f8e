// Aggregate reflection: the fields of a plain aggregate, without user code.
//
// ferry's own small replacement for Boost.PFR (not in Debian 12's Boost 1.74).
// `field_count<T>()` counts the fields of an aggregate by probing brace
// initialisation; `visit_fields(x, f)` calls `f` with references to every
// field, in declaration order, through a structured binding.
//
// Supported: aggregates of up to 32 fields, whose fields are not C arrays (use
// `std::array`) and which have no base classes. Such types get every family
// that can encode all their fields, field by field, with no user code (Dask's
// `register_generic`). A type that brings its own `serialize`/`save`/`load`
// (cereal), `inspect` (CAF) or `MSGPACK_DEFINE` (msgpack) keeps using it for
// that family. Recursive aggregates (a field whose type contains the aggregate
// itself) need their own serialization functions.
//
// Thread-safety: everything here is compile-time or pure.
//
//     struct point { int x; double y; std::string label; };
//     static_assert(ferry::serializers::field_count<point>() == 3);
//     ferry::serializers::visit_fields(p, [](auto&... fs) { (std::cout << ... << fs); });
#pragma once

#include <array>
#include <cstddef>
#include <cstdlib>
#include <tuple>
#include <type_traits>
#include <utility>

namespace ferry::serializers {

namespace detail {

/// Converts to any type; used only in brace-initialisation probes, which are
/// unevaluated. Defined all the same: Clang instantiates the constexpr
/// constructors a probe names (std::optional's, ...) and requires a
/// definition of what they use when the aggregate has no linkage (a type
/// in an unnamed namespace). Never called.
template <class Aggregate>
struct any_field {
  template <class U>
  requires(!std::is_same_v<std::remove_cvref_t<U>, Aggregate>)
  operator U() const noexcept {
    std::abort();
  }
};

template <class T, std::size_t... Is>
constexpr bool brace_constructible(std::index_sequence<Is...>) {
  return requires {
    T{(static_cast<void>(Is), any_field<T>{})...};
  };
}

template <class T, std::size_t N>
constexpr std::size_t count_fields() {
  if constexpr (N < 32 &&
                brace_constructible<T>(std::make_index_sequence<N + 1>{}))
    return count_fields<T, N + 1>();
  else
    return N;
}

template <class T>
struct is_std_array : std::false_type {};

template <class T, std::size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};

} // namespace detail

/// True for class types whose fields `visit_fields` can reach: non-union,
/// non-polymorphic aggregates other than `std::array`.
template <class T>
inline constexpr bool is_reflectable_v =
  std::is_class_v<T>&& std::is_aggregate_v<T> && !std::is_union_v<T> &&
  !std::is_polymorphic_v<T> && !detail::is_std_array<T>::value;

/// Returns the number of fields of the aggregate `T`.
/// @pre `is_reflectable_v<T>`
template <class T>
[[nodiscard]] constexpr std::size_t field_count() noexcept {
  static_assert(is_reflectable_v<T>, "ferry: field_count needs an aggregate");
  return detail::count_fields<T, 0>();
}

/// Calls `f` with a reference to every field of `x` in declaration order and
/// returns its result. `x` may be const; the references carry its constness.
/// @pre `is_reflectable_v<std::remove_cvref_t<T>>`
template <class T, class F>
constexpr decltype(auto) visit_fields(T& x, F&& f) {
  constexpr auto n = field_count<std::remove_cv_t<T>>();
  static_assert(n <= 32,
                "ferry: aggregates of more than 32 fields are not reflectable");
  if constexpr (n == 0) {
    return f();
  } else if constexpr (n == 1) {
    auto& [m0] = x;
    return f(m0);
  } else if constexpr (n == 2) {
    auto& [m0, m1] = x;
    return f(m0, m1);
  } else if constexpr (n == 3) {
    auto& [m0, m1, m2] = x;
    return f(m0, m1, m2);
  } else if constexpr (n == 4) {
    auto& [m0, m1, m2, m3] = x;
    return f(m0, m1, m2, m3);
  } else if constexpr (n == 5) {
    auto& [m0, m1, m2, m3, m4] = x;
    return f(m0, m1, m2, m3, m4);
  } else if constexpr (n == 6) {
    auto& [m0, m1, m2, m3, m4, m5] = x;
    return f(m0, m1, m2, m3, m4, m5);
  } else if constexpr (n == 7) {
    auto& [m0, m1, m2, m3, m4, m5, m6] = x;
    return f(m0, m1, m2, m3, m4, m5, m6);
  } else if constexpr (n == 8) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7);
  } else if constexpr (n == 9) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8);
  } else if constexpr (n == 10) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9);
  } else if constexpr (n == 11) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10);
  } else if constexpr (n == 12) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11);
  } else if constexpr (n == 13) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12);
  } else if constexpr (n == 14) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13);
  } else if constexpr (n == 15) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14);
  } else if constexpr (n == 16) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
           m15] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15);
  } else if constexpr (n == 17) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16);
  } else if constexpr (n == 18) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16, m17] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16, m17);
  } else if constexpr (n == 19) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16, m17, m18] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16, m17, m18);
  } else if constexpr (n == 20) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16, m17, m18, m19] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16, m17, m18, m19);
  } else if constexpr (n == 21) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16, m17, m18, m19, m20] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16, m17, m18, m19, m20);
  } else if constexpr (n == 22) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16, m17, m18, m19, m20, m21] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16, m17, m18, m19, m20, m21);
  } else if constexpr (n == 23) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16, m17, m18, m19, m20, m21, m22] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16, m17, m18, m19, m20, m21, m22);
  } else if constexpr (n == 24) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16, m17, m18, m19, m20, m21, m22, m23] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16, m17, m18, m19, m20, m21, m22, m23);
  } else if constexpr (n == 25) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16, m17, m18, m19, m20, m21, m22, m23, m24] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16, m17, m18, m19, m20, m21, m22, m23, m24);
  } else if constexpr (n == 26) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16, m17, m18, m19, m20, m21, m22, m23, m24, m25] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25);
  } else if constexpr (n == 27) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26);
  } else if constexpr (n == 28) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27);
  } else if constexpr (n == 29) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27,
             m28);
  } else if constexpr (n == 30) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28,
           m29] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27,
             m28, m29);
  } else if constexpr (n == 31) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28, m29,
           m30] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27,
             m28, m29, m30);
  } else if constexpr (n == 32) {
    auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15,
           m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28, m29,
           m30, m31] = x;
    return f(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14,
             m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27,
             m28, m29, m30, m31);
  }
}

namespace detail {

struct field_typer {
  template <class... Fs>
  constexpr std::type_identity<std::tuple<std::remove_cvref_t<Fs>...>>
  operator()(Fs&...) const noexcept {
    return {};
  }
};

} // namespace detail

/// The field types of an aggregate, as `std::tuple<F0, F1, ...>` (cv-ref
/// removed).
template <class T>
using field_types = typename decltype(visit_fields(
  std::declval<T&>(), detail::field_typer{}))::type;

} // namespace ferry::serializers
