// Where the store's warnings go.
//
// The store logs rarely: once when a handle serialized out of band pins its
// object, and when it repairs a segment whose lock owner died. By default
// warnings go to stderr; a process can route them elsewhere. The hook is
// process-wide and may be called from any thread (serialize your sink if
// needed); setting it is thread-safe.
#pragma once

#include <functional>
#include <string_view>

namespace ferry::store {

/// Receives one warning line (without a trailing newline).
using log_hook = std::function<void(std::string_view)>;

/// Installs `hook` (an empty function restores the stderr default) and
/// returns the previous hook.
log_hook set_log_hook(log_hook hook);

/// Sends `line` to the current hook.
void log_warning(std::string_view line);

} // namespace ferry::store
