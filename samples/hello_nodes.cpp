// hello_nodes: the smallest multi-process ferry program.
//
// This process starts itself again as the peer (--ferry.node-name=hello-peer,
// a ferry option like any other). Each process runs a ferry node; the peer
// publishes an actor, this node connects to it and asks it 1000 questions.
// The actor is a plain CAF actor: ferry encodes the requests and replies
// with the link's family (cereal.binary unless a config says otherwise) and
// ferry's link carries them: a same-host lane here, since both processes
// share the host store (a TCP connection between hosts). Run: ./hello_nodes
// (options such as --ferry.store.name=NAME apply to both processes).
#include "peer_process.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <iostream>
#include <string>

namespace {

using namespace std::chrono_literals;

/// A greeting: a plain aggregate, so every family encodes it field by field
/// (cereal, msgpack) or through `inspect` (caf) with no code of its own.
struct greeting {
  std::string from;
  int32_t count = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, greeting& x) {
  return f(caf::meta::type_name("greeting"), x.from, x.count);
}

void register_types(ferry::node_config& cfg) {
  // In both processes, under the same name.
  cfg.add_message_type<greeting>("hello.greeting");
}

caf::behavior greeter(caf::event_based_actor*) {
  return {
    [](const greeting& x) { return greeting{"peer", x.count + 1}; },
  };
}

int run_peer(ferry::node_config& cfg) {
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "hello_nodes peer: " << ferry::render(n.error()) << '\n';
    return 1;
  }
  auto actor = (*n)->system().spawn(greeter);
  auto port = (*n)->publish(actor);
  if (!port) {
    std::cerr << "hello_nodes peer: " << ferry::render(port.error()) << '\n';
    return 1;
  }
  sample::serve_until_parent_exits(*port);
  caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  ferry::node_config cfg;
  register_types(cfg);
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "hello_nodes: " << ferry::render(err) << '\n';
    return 2;
  }
  if (cfg.node_name == "hello-peer")
    return run_peer(cfg);
  sample::peer_process peer{
    sample::peer_args({argv + 1, argv + argc}, "hello-peer")};
  cfg.node_name = "hello-main";
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "hello_nodes: " << ferry::render(n.error()) << '\n';
    return 1;
  }
  auto remote = (*n)->remote_actor("127.0.0.1", peer.port());
  if (!remote) {
    std::cerr << "hello_nodes: " << ferry::render(remote.error()) << '\n';
    return 1;
  }
  caf::scoped_actor self{(*n)->system()};
  constexpr int rounds = 1000;
  greeting last{"main", 0};
  int rc = 0;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < rounds && rc == 0; ++i)
    self->request(*remote, 10s, greeting{"main", last.count})
      .receive([&](const greeting& reply) { last = reply; },
               [&](const caf::error& err) {
                 std::cerr << "hello_nodes: " << ferry::render(err) << '\n';
                 rc = 1;
               });
  auto elapsed = std::chrono::steady_clock::now() - start;
  auto us = std::chrono::duration<double, std::micro>(elapsed).count();
  std::cout << "hello_nodes: " << rounds << " round trips to node "
            << "hello-peer (pid " << peer.pid() << ", port " << peer.port()
            << "), last reply from '" << last.from << "' counting "
            << last.count << ", " << us / rounds << " us per round trip\n";
  if (auto st = (*n)->stats("hello-peer")) {
    std::cout << "hello_nodes: the link sent";
    for (auto& [family, count] : st->sent_by_family)
      std::cout << ' ' << count << " x " << family;
    std::cout << " and received";
    for (auto& [family, count] : st->received_by_family)
      std::cout << ' ' << count << " x " << family;
    std::cout << (st->same_host ? " (same host: large frames would go "
                                  "through the shared store)\n"
                                : "\n");
  }
  if (last.count != rounds)
    rc = 1;
  return rc;
}
