// Private helpers for building errors and naming types. Not API.
#pragma once

#include "ferry/serializers/errc.hpp"

#include <caf/error.hpp>

#include <string>
#include <typeinfo>
#include <vector>

namespace ferry::serializers::detail {

/// Returns an error of code `code` whose context is the string `what`.
[[nodiscard]] caf::error make_error(errc code, std::string what);

/// Returns the demangled name of `type`.
[[nodiscard]] std::string demangle(const std::type_info& type);

/// Returns the demangled form of the mangled name `name`.
[[nodiscard]] std::string demangle_name(const char* name);

/// Returns `xs` as `[a, b, c]` (family and type lists in error texts).
[[nodiscard]] std::string list_names(const std::vector<std::string>& xs);

/// Returns what the exception being handled says ("an exception that is not
/// a std::exception" for anything else). Call only inside a catch block:
/// user code may throw anything, and nothing may escape ferry's codecs.
[[nodiscard]] std::string current_exception_text();

/// Returns the demangled name of `T`.
template <class T>
[[nodiscard]] std::string type_label() {
  return demangle(typeid(T));
}

/// Thrown inside a library's call stack (cereal archives, msgpack visitors
/// and adaptors) when ferry refuses what it reads or writes, to leave that
/// stack; caught at the family adapter and turned into an error value.
/// Aggregates append the member it happened in (`note_member`) on its way
/// out. Never escapes ferry.
struct decode_fault {
  errc code;
  std::string what;
};

/// Thrown inside a library's call stack (cereal archives, msgpack adaptors)
/// to carry an error value of any category out unchanged, such as a handle
/// hook's (detail/actor_handles.hpp); caught at the family adapter.
struct error_fault {
  caf::error err;
};

} // namespace ferry::serializers::detail
