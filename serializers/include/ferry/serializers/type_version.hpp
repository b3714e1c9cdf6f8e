// A message type's declared version, and which types evolve by name.
//
// A type declares its version as `static constexpr uint32_t ferry_version`
// (or through a specialisation of `type_version<T>` for a type one cannot
// edit); 0 means none. The version is part of the type's shape (shape.hpp).
//
// A plain aggregate with a version **evolves**: two builds with different
// members exchange it. The families that carry members by name (`msgpack`
// as a map, `cereal.json` as an object with the members' names) write and
// read it by name; cereal.binary and cereal.portable read it by the
// writer's shape (writer_shapes.hpp). A member the reader does not have is
// skipped, a member the reader has and the input lacks keeps the value the
// type's default constructor gives it (its default member initializer).
// docs/evolution.md has the rules.
//
// Thread-safety: compile-time only.
#pragma once

#include "ferry/serializers/detail/type_traits.hpp"
#include "ferry/serializers/reflect.hpp"

#include <cstdint>

namespace ferry::serializers {

/// The version of `T`: `T::ferry_version` when the type declares it, else 0.
/// Specialise for a type you cannot edit.
template <class T>
struct type_version {
  static constexpr uint32_t value = [] {
    if constexpr (requires { T::ferry_version; })
      return static_cast<uint32_t>(T::ferry_version);
    else
      return uint32_t{0};
  }();
};

namespace detail {

/// True for plain aggregates with a version: written and read by member name
/// where the family can (see the file comment).
template <class T>
concept evolving =
  is_reflectable_v<T> && !has_own_any<T> && type_version<T>::value != 0;

} // namespace detail

} // namespace ferry::serializers
