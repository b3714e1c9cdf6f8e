// Small helpers for the text of ferry's errors and log lines (see text.hpp).
#include "text.hpp"

#include <cstdlib>
#include <cxxabi.h>
#include <memory>

namespace ferry::detail {

std::string join(const std::vector<std::string>& xs) {
  std::string result = "[";
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i > 0)
      result += ", ";
    result += xs[i];
  }
  return result + "]";
}

std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> result{
    abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free};
  return status == 0 && result ? std::string{result.get()} : std::string{name};
}

} // namespace ferry::detail
