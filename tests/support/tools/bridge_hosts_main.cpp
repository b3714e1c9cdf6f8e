// ferry_bridge_hosts: hosts made of network namespaces on one bridge
// (ferry/test/bridge_hosts.hpp) for tests written in Python. Prints one line
// `host <i> <namespace> <address>` per host, then "ready"; or "skip <why>"
// when this machine does not let the process make namespaces (the test
// skips, or fails under FERRY_REQUIRE_PRIVILEGED_TESTS=1). Deletes the
// namespaces when its standard input closes.
//
// Usage: ferry_bridge_hosts COUNT   (run as root: `ip netns add` needs it)
#include "ferry/test/bridge_hosts.hpp"
#include "ferry/test/namespaces.hpp"

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2 || std::stoul(argv[1]) == 0) {
    std::cout << "error usage: ferry_bridge_hosts COUNT" << std::endl;
    return 2;
  }
  auto count = std::stoul(argv[1]);
  if (ferry::test::ip_tool().empty()) {
    std::cout << "skip no `ip` tool (Debian package iproute2)" << std::endl;
    return 0;
  }
  ferry::test::bridge_hosts hosts{count};
  if (auto why = hosts.set_up(); !why.empty()) {
    std::cout << "skip " << why << std::endl;
    return 0;
  }
  for (size_t i = 0; i < count; ++i)
    std::cout << "host " << i << ' ' << hosts.ns(i) << ' '
              << hosts.address(i) << '\n';
  std::cout << "ready" << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    // Anything written is ignored: the hosts live until stdin closes.
  }
  return 0;
}
