// Reaching one member of an aggregate by an index known at run time. Not
// API.
//
// Readers of evolving types (by member name in msgpack, by the writer's
// shape in cereal's binary formats) find a member's index in the input and
// then read that member: `with_member` runs the read on it, so that a fault
// names the member (`in_member`).
//
// Thread-safety: pure.
#pragma once

#include "ferry/serializers/detail/exact.hpp"
#include "ferry/serializers/reflect.hpp"

#include <cstddef>
#include <type_traits>

namespace ferry::serializers::detail {

/// Runs `f(member)` for member `index` of the aggregate `x`, inside
/// `in_member`; does nothing when `x` has no member `index`.
template <class T, class F>
void with_member(T& x, size_t index, F&& f) {
  visit_fields(x, [&](auto&... fields) {
    size_t at = 0;
    [[maybe_unused]] auto one = [&](auto& field) {
      if (at++ != index)
        return;
      using field_type = std::remove_cvref_t<decltype(field)>;
      in_member<T, field_type>(index, [&] { f(field); });
    };
    (one(fields), ...);
  });
}

} // namespace ferry::serializers::detail
