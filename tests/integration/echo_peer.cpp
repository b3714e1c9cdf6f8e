// Peer process for caf_loopback_test: publishes an actor that answers a string
// with the string reversed, prints "port <N>" on stdout, and exits when its
// stdin closes (so it never outlives the test that started it).
#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <algorithm>
#include <iostream>
#include <string>

namespace {

caf::behavior reverser() {
  return {
    [](const std::string& text) {
      return std::string{text.rbegin(), text.rend()};
    },
  };
}

} // namespace

int main(int argc, char** argv) {
  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "echo_peer: bad arguments: " << caf::to_string(err) << '\n';
    return 2;
  }
  caf::actor_system sys{cfg};
  auto actor = sys.spawn(reverser);
  auto port = sys.middleman().publish(actor, 0, "127.0.0.1");
  if (!port) {
    std::cerr << "echo_peer: publish failed: " << sys.render(port.error())
              << '\n';
    return 1;
  }
  std::cout << "port " << *port << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    // Any input line is ignored; end of input ends the peer.
  }
  caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  return 0;
}
