// Reading ferry's settings from CAF's parsed configuration (see
// node/settings_reader.hpp).
#include "node/settings_reader.hpp"

#include "ferry/errc.hpp"

#include <array>
#include <cctype>
#include <limits>
#include <utility>

namespace ferry::detail {

caf::error bad_value(const std::string& key, const std::string& expected) {
  return caf::make_error(errc::invalid_config,
                         "setting \"" + key + "\" must be " + expected);
}

caf::error read_uint(const caf::config_value& value, const std::string& key,
                     uint64_t& out) {
  auto x = caf::get_if<int64_t>(&value);
  if (x == nullptr || *x < 0)
    return bad_value(key, "a non-negative integer");
  out = static_cast<uint64_t>(*x);
  return caf::none;
}

const char* const size_forms =
  "a byte count (268435456) or a whole number with a unit (256MiB, 2GiB, "
  "64KiB; KiB, MiB, GiB and TiB are powers of 1024, kB, MB, GB and TB "
  "powers of 1000)";

namespace {

bool iequals(std::string_view x, std::string_view y) {
  if (x.size() != y.size())
    return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(x[i])) !=
        std::tolower(static_cast<unsigned char>(y[i])))
      return false;
  return true;
}

std::string_view trim(std::string_view x) {
  while (!x.empty() && std::isspace(static_cast<unsigned char>(x.front())))
    x.remove_prefix(1);
  while (!x.empty() && std::isspace(static_cast<unsigned char>(x.back())))
    x.remove_suffix(1);
  return x;
}

} // namespace

caf::expected<uint64_t> parse_size(std::string_view text,
                                   const std::string& key) {
  auto refuse = [&](const std::string& why) {
    return caf::make_error(errc::invalid_config,
                           "setting \"" + key + "\" = \"" + std::string{text} +
                             "\" " + why + ": use " + size_forms);
  };
  auto x = trim(text);
  size_t digits = 0;
  while (digits < x.size() &&
         std::isdigit(static_cast<unsigned char>(x[digits])))
    ++digits;
  if (digits == 0)
    return refuse("is not a size");
  uint64_t n = 0;
  for (size_t i = 0; i < digits; ++i) {
    auto d = static_cast<uint64_t>(x[i] - '0');
    if (n > (std::numeric_limits<uint64_t>::max() - d) / 10)
      return refuse("is too large");
    n = n * 10 + d;
  }
  auto unit = trim(x.substr(digits));
  static constexpr std::array<std::pair<std::string_view, uint64_t>, 9> units{{
    {"B", 1},
    {"KiB", uint64_t{1} << 10},
    {"MiB", uint64_t{1} << 20},
    {"GiB", uint64_t{1} << 30},
    {"TiB", uint64_t{1} << 40},
    {"kB", 1000},
    {"MB", 1000 * 1000},
    {"GB", 1000 * 1000 * 1000},
    {"TB", uint64_t{1000} * 1000 * 1000 * 1000},
  }};
  if (unit.empty())
    return n;
  for (auto& [name, factor] : units) {
    if (!iequals(unit, name))
      continue;
    if (n > std::numeric_limits<uint64_t>::max() / factor)
      return refuse("is too large");
    return n * factor;
  }
  return refuse("has an unknown unit \"" + std::string{unit} + "\"");
}

caf::error read_size(const caf::config_value& value, const std::string& key,
                     uint64_t& out) {
  if (auto x = caf::get_if<int64_t>(&value)) {
    if (*x < 0)
      return bad_value(key,
                       std::string{"a size, not negative: use "} + size_forms);
    out = static_cast<uint64_t>(*x);
    return caf::none;
  }
  if (auto x = caf::get_if<std::string>(&value)) {
    auto n = parse_size(*x, key);
    if (!n)
      return std::move(n.error());
    out = *n;
    return caf::none;
  }
  return bad_value(key, std::string{"a size: "} + size_forms);
}

caf::error read_strings(const caf::config_value& value, const std::string& key,
                        std::vector<std::string>& out, const char* example) {
  auto xs = caf::get_if<caf::config_value::list>(&value);
  if (xs == nullptr)
    return bad_value(key, std::string{"a list of strings, e.g. "} + example);
  std::vector<std::string> result;
  for (auto& x : *xs) {
    auto str = caf::get_if<std::string>(&x);
    if (str == nullptr)
      return bad_value(key, "a list of strings");
    result.emplace_back(*str);
  }
  out = std::move(result);
  return caf::none;
}

} // namespace ferry::detail
