// Walking every member of a plain aggregate, as the families that reflect
// aggregates do. Not API.
//
// cereal's and msgpack's adaptors for plain aggregates write or read one
// member at a time, each the same way: a trace line for the member when the
// call traces (`trace_member`), then the write or read inside `in_member`, so
// that a fault names the member. `each_member` is that walk; the family
// brings the write or read. (The caf family walks members too, but reports
// faults as error values, not exceptions: it does not use this.)
//
// Thread-safety: pure apart from the calling thread's trace sink.
#pragma once

#include "ferry/serializers/detail/exact.hpp"
#include "ferry/serializers/detail/scope.hpp"
#include "ferry/serializers/reflect.hpp"

#include <cstddef>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace ferry::serializers::detail {

/// Member `I` of an aggregate of type `T`, for `each_member`.
template <class T, size_t I, class Field, class F>
void each_member_at(Field& field, F& f) {
  using field_type = std::remove_cvref_t<Field>;
  if (tracing())
    trace_member(typeid(T), I, typeid(field));
  in_member<T, field_type>(
    I, [&] { f(field, std::integral_constant<size_t, I>{}); });
}

/// Runs `f(field, index)` for every member of the aggregate `x` (which may be
/// const) in declaration order, after its trace line and inside `in_member`
/// (see above). `index` is a `std::integral_constant<size_t, I>`: a member's
/// position, usable as a run-time value and as a template argument.
template <class X, class F>
void each_member(X& x, F&& f) {
  using T = std::remove_cv_t<X>;
  visit_fields(x, [&](auto&... fields) {
    [&]<size_t... Is>(std::index_sequence<Is...>) {
      (each_member_at<T, Is>(fields, f), ...);
    }
    (std::index_sequence_for<decltype(fields)...>{});
  });
}

} // namespace ferry::serializers::detail
