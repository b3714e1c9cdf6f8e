// Reading a node_config in tests: from an INI text and flags, as a node
// reads its file and command line.
#pragma once

#include "ferry/node_config.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ferry::test {

/// Parses `ini` (a configuration file's text) and `args` into `cfg`.
inline caf::error parse(ferry::node_config& cfg, const std::string& ini,
                        std::vector<std::string> args = {}) {
  std::istringstream in{ini};
  return cfg.parse(std::move(args), in);
}

/// Parses `ini` and `args` into `cfg` and finalizes it; fails the test on
/// an error.
inline void load(ferry::node_config& cfg, const std::string& ini,
                 std::vector<std::string> args = {}) {
  ASSERT_FALSE(parse(cfg, ini, std::move(args)));
  ASSERT_FALSE(cfg.finalize());
}

/// Parses `args` into `cfg` and returns what finalizing says.
inline caf::error parse_and_finalize(ferry::node_config& cfg,
                                     std::vector<std::string> args) {
  if (auto err = parse(cfg, "", std::move(args)))
    return err;
  return cfg.finalize();
}

} // namespace ferry::test
