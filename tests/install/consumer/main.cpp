// Uses all three installed ferry libraries through ferry::framework.
#include <ferry/errc.hpp>
#include <ferry/serializers/errc.hpp>
#include <ferry/store/errc.hpp>

#include <ferry/node.hpp>

#include <caf/all.hpp>

#include <iostream>
#include <string>

int main() {
  ferry::node_config cfg;
  cfg.store_enabled = false;
  auto node = ferry::node::start(cfg);
  if (!node)
    return 1;
  auto err = caf::make_error(ferry::errc::no_common_family,
                             std::string{"consumer check"});
  auto text = ferry::render(err);
  std::cout << text << '\n';
  return text == "ferry_fw: no_common_family: consumer check" ? 0 : 1;
}
