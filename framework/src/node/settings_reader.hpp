// Reading ferry's settings from CAF's parsed configuration.
//
// CAF 0.17 hands nested config-file sections over as `caf::settings`
// (config values by key); these helpers read one value each and name the
// setting and what it must be when it is not. Sizes are declared to CAF as
// text, so a flag such as `--ferry.store.capacity=256MiB` reaches ferry
// unparsed; a config file gives an integer or a quoted string. `read_size`
// takes both, and `parse_size` is the one reader of units. Durations come
// as CAF timespans (`20us`, `30s`) or as integers in the setting's unit.
#pragma once

#include <caf/config_value.hpp>
#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::detail {

/// Returns `invalid_config` saying that setting `key` must be `expected`.
caf::error bad_value(const std::string& key, const std::string& expected);

/// Reads a non-negative integer.
caf::error read_uint(const caf::config_value& value, const std::string& key,
                     uint64_t& out);

/// The accepted forms of a size, for help texts and errors.
extern const char* const size_forms;

/// Parses a size: a byte count (`268435456`) or a whole number with a unit
/// (`256MiB`, `2GiB`, `64KiB`, `1TiB`: powers of 1024; `kB`, `MB`, `GB`,
/// `TB`: powers of 1000; `B`: bytes), optionally with spaces between them.
/// Units are case-insensitive. Returns `invalid_config` naming `key` and the
/// accepted forms for anything else, or a size above 2^64 - 1.
caf::expected<uint64_t> parse_size(std::string_view text,
                                   const std::string& key);

/// Reads a size: a non-negative integer or a string `parse_size` accepts.
caf::error read_size(const caf::config_value& value, const std::string& key,
                     uint64_t& out);

/// Reads a duration: a timespan (`20us`, `30s`), or a non-negative integer
/// counting `Duration`'s unit.
template <class Duration>
caf::error read_duration(const caf::config_value& value, const std::string& key,
                         Duration& out) {
  if (auto ts = caf::get_if<caf::timespan>(&value)) {
    out = std::chrono::duration_cast<Duration>(*ts);
    return caf::none;
  }
  uint64_t count = 0;
  if (auto err = read_uint(value, key, count))
    return err;
  out = Duration{static_cast<typename Duration::rep>(count)};
  return caf::none;
}

/// Reads a list of strings; `example` shows one in the error.
caf::error read_strings(const caf::config_value& value, const std::string& key,
                        std::vector<std::string>& out,
                        const char* example = "[\"cereal.binary\"]");

} // namespace ferry::detail
