// Building the store's errors (private).
//
// `fail` makes a `caf::error` of ferry's `errc` whose message is its
// arguments streamed together, so each failure names the store, what went
// wrong and the fix in one readable line; `errno_text` names an errno
// value. Both are plain functions of their arguments: they touch no shared
// state and may be called from any thread, with or without the store lock.
#pragma once

#include "ferry/store/errc.hpp"

#include <caf/error.hpp>
#include <caf/make_message.hpp>

#include <cstring>
#include <sstream>
#include <string>

namespace ferry::store::detail {

/// Returns an error with `code` and the message `xs...` (streamed).
template <class... Ts>
[[nodiscard]] caf::error fail(errc code, Ts&&... xs) {
  std::ostringstream out;
  (out << ... << xs);
  return caf::make_error(code, out.str());
}

/// Returns the text of errno value `err` (`strerror`).
[[nodiscard]] inline std::string errno_text(int err) {
  return std::strerror(err);
}

} // namespace ferry::store::detail
