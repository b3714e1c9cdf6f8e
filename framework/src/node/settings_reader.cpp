// Reading ferry's settings from CAF's parsed configuration (see
// node/settings_reader.hpp).
#include "node/settings_reader.hpp"

#include "ferry/errc.hpp"

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

caf::error read_strings(const caf::config_value& value, const std::string& key,
                        std::vector<std::string>& out) {
  auto xs = caf::get_if<caf::config_value::list>(&value);
  if (xs == nullptr)
    return bad_value(key, "a list of family names, e.g. [\"cereal.binary\"]");
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
