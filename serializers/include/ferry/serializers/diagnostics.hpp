// Serializability reports (Ray's `inspect_serializability`).
//
// `inspect_serializability<T>()` says which built-in families can encode `T`
// and, for a plain aggregate, member by member which member types block which
// family and why, with the fix. It is computed at compile time and needs no
// registry (run-time registrations are not considered).
//
//     std::cout << inspect_serializability<my_msg>().to_string();
//     // my_msg: cereal.binary ok, ..., msgpack blocked: member #2 (std::variant<...>): ...
//
// Thread-safety: pure.
#pragma once

#include "ferry/serializers/detail/type_ops.hpp"

#include <string>
#include <utility>
#include <vector>

namespace ferry::serializers {

/// What blocks one member of an aggregate.
struct member_report {
  /// Position of the member in declaration order.
  size_t index = 0;
  /// The member's type.
  std::string type;
  /// Family name and reason, for each built-in family that cannot encode it.
  std::vector<std::pair<std::string, std::string>> blocked;
};

/// Which families can encode a type, and why the others cannot.
struct serializability_report {
  /// The type inspected.
  std::string type;
  /// Built-in families that can encode the type.
  std::vector<std::string> encodable_by;
  /// Family name and reason, for each built-in family that cannot.
  std::vector<std::pair<std::string, std::string>> blocked;
  /// Per member, for plain aggregates; empty otherwise.
  std::vector<member_report> members;

  /// Returns whether at least one built-in family can encode the type.
  [[nodiscard]] bool serializable() const noexcept {
    return !encodable_by.empty();
  }

  /// Returns the report as readable text, one line per finding.
  [[nodiscard]] std::string to_string() const;
};

namespace detail {

template <class T, size_t... Is>
void add_members(serializability_report& r, std::index_sequence<Is...>) {
  using fields = field_types<T>;
  auto one = [&](auto index, auto* tag) {
    using F = std::remove_pointer_t<decltype(tag)>;
    member_report m;
    m.index = index;
    m.type = type_label<F>();
    for (size_t i = 0; i < builtin_count; ++i) {
      auto b = static_cast<builtin>(i);
      if (!builtin_can_encode<F>(b))
        m.blocked.emplace_back(std::string{builtin_names[i]},
                               builtin_why_not<F>(b));
    }
    r.members.push_back(std::move(m));
  };
  (one(Is, static_cast<std::tuple_element_t<Is, fields>*>(nullptr)), ...);
}

} // namespace detail

/// Returns which built-in families can encode `T`, and member by member what
/// blocks the others.
template <class T>
[[nodiscard]] serializability_report inspect_serializability() {
  serializability_report r;
  r.type = detail::type_label<T>();
  for (size_t i = 0; i < detail::builtin_count; ++i) {
    auto b = static_cast<detail::builtin>(i);
    if (detail::builtin_can_encode<T>(b))
      r.encodable_by.emplace_back(detail::builtin_names[i]);
    else
      r.blocked.emplace_back(std::string{detail::builtin_names[i]},
                             detail::builtin_why_not<T>(b));
  }
  if constexpr (is_reflectable_v<T>)
    detail::add_members<T>(
      r, std::make_index_sequence<std::tuple_size_v<field_types<T>>>{});
  return r;
}

} // namespace ferry::serializers
