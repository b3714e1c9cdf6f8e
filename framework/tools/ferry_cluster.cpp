// ferry-cluster: an operator's view of a ferry cluster, and downing by hand.
//
//   ferry-cluster [ferry flags] HOST:PORT members
//       prints the members as the node at HOST:PORT (a member's
//       `ferry.cluster.address`) sees them: one line each with its name,
//       address, state, reachability and up order, sorted by address;
//   ferry-cluster [ferry flags] HOST:PORT down ADDRESS
//       asks that node to down the member at ADDRESS (what the `none`
//       downing policy leaves to an operator; docs/cluster.md); the others
//       learn it with the gossip.
//
// The tool is a ferry node of its own (not a member): it connects to the
// node's cluster daemon like any peer, so a cluster on TLS links needs the
// same `--ferry.tls.*` flags a member has (docs/security.md).
// Exit status: 0; 1 when the node cannot be reached, refuses, or has no
// member at ADDRESS; 2 on bad arguments.
#include "cluster/gossip.hpp"
#include "cluster/protocol.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

using namespace ferry::detail::cluster;

int usage() {
  std::cerr << "usage: ferry-cluster [ferry flags] HOST:PORT members\n"
               "       ferry-cluster [ferry flags] HOST:PORT down ADDRESS\n";
  return 2;
}

const char* state_name(member_state x) {
  return to_string(static_cast<ferry::member_status>(x));
}

int print_members(const gossip& view) {
  auto members = view.members;
  std::sort(members.begin(), members.end(),
            [](auto& x, auto& y) { return x.address < y.address; });
  std::printf("%-24s %-24s %-8s %-10s %s\n", "NAME", "ADDRESS", "STATE",
              "REACHABLE", "UP#");
  for (auto& m : members)
    std::printf("%-24s %-24s %-8s %-10s %llu\n", m.name.c_str(),
                m.address.c_str(), state_name(m.state),
                view.unreachable(m.uid) ? "no" : "yes",
                static_cast<unsigned long long>(m.up_number));
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  // The last words are the tool's; the ones before, ferry's flags.
  std::vector<std::string> words;
  std::vector<char*> flags{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::string{argv[i]}.rfind("--", 0) == 0)
      flags.push_back(argv[i]);
    else
      words.emplace_back(argv[i]);
  }
  if (words.size() < 2 || (words[1] == "members" && words.size() != 2) ||
      (words[1] == "down" && words.size() != 3) ||
      (words[1] != "members" && words[1] != "down"))
    return usage();
  auto colon = words[0].rfind(':');
  if (colon == std::string::npos)
    return usage();
  auto host = words[0].substr(0, colon);
  int port = std::atoi(words[0].c_str() + colon + 1);
  if (port <= 0 || port > 65535)
    return usage();
  ferry::node_config cfg;
  if (auto err = cfg.parse(static_cast<int>(flags.size()), flags.data())) {
    std::cerr << "ferry-cluster: " << ferry::render(err) << '\n';
    return 2;
  }
  cfg.node_name = "ferry-cluster";
  cfg.store_enabled = false;
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "ferry-cluster: " << ferry::render(n.error()) << '\n';
    return 1;
  }
  auto daemon =
    (*n)->remote_actor(host, static_cast<uint16_t>(port), daemon_name);
  if (!daemon) {
    std::cerr << "ferry-cluster: cannot reach the cluster daemon at "
              << words[0] << ": " << ferry::render(daemon.error()) << '\n';
    return 1;
  }
  caf::scoped_actor self{(*n)->system()};
  int status = 1;
  auto failed = [&](caf::error& err) {
    std::cerr << "ferry-cluster: " << words[0]
              << " did not answer: " << ferry::render(err) << '\n';
  };
  if (words[1] == "members") {
    self->request(*daemon, std::chrono::seconds{10}, view_atom::value)
      .receive(
        [&](const std::vector<std::byte>& bytes) {
          auto view = decode(bytes);
          if (!view) {
            std::cerr << "ferry-cluster: the view from " << words[0]
                      << " does not decode: " << ferry::render(view.error())
                      << '\n';
            return;
          }
          status = print_members(*view);
        },
        failed);
  } else {
    self->request(*daemon, std::chrono::seconds{10}, down_atom::value, words[2])
      .receive(
        [&](bool any) {
          if (any) {
            std::cout << "downed " << words[2] << '\n';
            status = 0;
          } else {
            std::cerr << "ferry-cluster: " << words[0] << " knows no member at "
                      << words[2] << '\n';
          }
        },
        failed);
  }
  return status;
}
