// `mentions`: a GoogleTest assertion that an error's text names something.
//
// Header only, for tests that link CAF: errors are checked by what their
// text says (what failed and how to fix it), and a failure shows the whole
// text.
#pragma once

#include <caf/error.hpp>

#include <gtest/gtest.h>

#include <string>

namespace ferry::test {

/// Whether `err` is an error whose text contains `needle`.
inline testing::AssertionResult mentions(const caf::error& err,
                                         const std::string& needle) {
  if (!err)
    return testing::AssertionFailure() << "no error; expected \"" << needle
                                       << "\"";
  auto text = caf::to_string(err);
  if (text.find(needle) == std::string::npos)
    return testing::AssertionFailure() << text << " lacks \"" << needle
                                       << "\"";
  return testing::AssertionSuccess();
}

} // namespace ferry::test
