// Uses all three installed ferry libraries through ferry::framework.
#include <ferry/errc.hpp>
#include <ferry/serializers/errc.hpp>
#include <ferry/store/errc.hpp>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <iostream>
#include <string>

int main() {
  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  caf::actor_system sys{cfg};
  auto err = caf::make_error(ferry::errc::no_common_family,
                             std::string{"consumer check"});
  auto text = ferry::render(err);
  std::cout << text << '\n';
  return text == "ferry_fw: no_common_family: consumer check" ? 0 : 1;
}
