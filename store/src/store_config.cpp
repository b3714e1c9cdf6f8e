#include "ferry/store/store_config.hpp"

#include <unistd.h>

#include <cstdlib>

namespace ferry::store {

std::string store_config::default_name() {
  return "ferry-" + std::to_string(::getuid());
}

std::string store_config::default_spill_directory() {
  std::string dir = "/tmp";
  if (auto* tmp = std::getenv("TMPDIR"); tmp != nullptr && *tmp != '\0')
    dir = tmp;
  return dir + "/ferry-spill-" + std::to_string(::getuid());
}

} // namespace ferry::store
