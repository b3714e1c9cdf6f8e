// Reading ferry's settings from CAF's parsed configuration.
//
// CAF 0.17 hands nested config-file sections over as `caf::settings`
// (config values by key); these helpers read one value each and name the
// setting and what it must be when it is not.
#pragma once

#include <caf/config_value.hpp>
#include <caf/error.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ferry::detail {

/// Returns `invalid_config` saying that setting `key` must be `expected`.
caf::error bad_value(const std::string& key, const std::string& expected);

/// Reads a non-negative integer.
caf::error read_uint(const caf::config_value& value, const std::string& key,
                     uint64_t& out);

/// Reads a list of strings (family names).
caf::error read_strings(const caf::config_value& value, const std::string& key,
                        std::vector<std::string>& out);

} // namespace ferry::detail
