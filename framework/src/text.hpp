// Small helpers for the text of ferry's errors and log lines.
#pragma once

#include <string>
#include <vector>

namespace ferry::detail {

/// Renders a list of names as "[a, b, c]".
std::string join(const std::vector<std::string>& xs);

/// Returns the readable name of a mangled C++ type name (the name itself
/// when it does not demangle).
std::string demangle(const char* name);

} // namespace ferry::detail
