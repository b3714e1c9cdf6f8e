// The registrations of one `registry`, shared by its source files
// (registry.cpp, registry_encode.cpp, registry_decode.cpp). Not installed,
// not API.
//
// Owns: `registry::state`, one snapshot of everything registered: types and
// their names, run-time families, stand-ins, exceptions carrying errors and
// the trace sink.
//
// Invariants: `types` and `names` are each other's inverse (one name per
// type, one type per name); every type in `builtin_types` is in `types`. A
// published state is never changed: `registry::update` copies it, changes
// the copy and publishes that.
//
// Thread-safety: a published state is immutable, so any number of threads
// may read one they loaded; only `registry::update`, serialised by the
// registry's write mutex, builds a new one.
#pragma once

#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/registry.hpp"

#include <caf/type_nr.hpp>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeindex>
#include <unordered_map>
#include <vector>

namespace ferry::serializers {

// The registrations, immutable once published. Writers copy, change and
// publish a new state; readers keep whatever state they loaded.
struct registry::state {
  struct type_entry {
    std::string name;
    const detail::type_ops* ops = nullptr;
    decode_message_fn decode_message = nullptr;
  };

  /// Hashes names for lookups by `std::string` and `std::string_view` alike.
  struct name_hash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const noexcept {
      return std::hash<std::string_view>{}(name);
    }
  };

  std::unordered_map<std::type_index, type_entry> types;
  std::unordered_map<std::string, std::type_index, name_hash, std::equal_to<>>
    names;
  /// The registered type of each CAF built-in type number
  /// (`caf::type_nr<T>::value`): a `caf::message` reports a built-in element
  /// by its number alone (see `element_type`).
  std::array<std::optional<std::type_index>, caf::type_nrs> builtin_types;
  std::map<std::string, std::shared_ptr<const family>, std::less<>> families;
  std::unordered_map<std::type_index, std::shared_ptr<const stand_in_spec>>
    stand_ins;
  std::shared_ptr<const std::function<void(std::string_view)>> sink;
  std::vector<detail::error_exception> error_exceptions;

  /// Returns the name `type` is registered under, or else its demangled C++
  /// name.
  std::string name_of(std::type_index type) const;
};

} // namespace ferry::serializers
