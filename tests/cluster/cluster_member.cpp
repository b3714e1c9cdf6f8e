// One member of a test cluster: a ferry node that publishes a "member"
// actor, prints "port <N>", then waits on stdin for
//   go <start> <port>...
// (`start`: a system_clock time in microseconds since the epoch; the ports
// of the other members on 127.0.0.1). At `start` it connects to every other
// member at once, one thread each, and right after each `remote_actor`
// returns sends that member a one-way message naming itself, then a
// request. For each peer it prints
//   result <port> ok <milliseconds from start to the answer>
// or
//   result <port> fail <error>
// and then "done". On "report" it prints "received <name>..." (the members
// whose one-way message arrived) and "link <peer> unasked=<n>" per link
// (answers that came to no request of its own), then "end". It exits when
// stdin closes. Flags are ferry's and CAF's (--ferry.node-name=...).
#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

using report_atom = caf::atom_constant<caf::atom("report")>;

struct member_state {
  std::set<std::string> received;
};

/// Counts the one-way messages (the sender's name) and answers requests.
caf::behavior member(caf::stateful_actor<member_state>* self) {
  return {
    [self](const std::string& from) { self->state.received.insert(from); },
    [](uint64_t x) { return x + 1; },
    [self](report_atom) {
      return std::vector<std::string>{self->state.received.begin(),
                                      self->state.received.end()};
    },
  };
}

/// Connects to the member at `port`, sends it this node's name one way and
/// asks it a question; returns the result line.
std::string meet(ferry::node& n, uint16_t port,
                 std::chrono::system_clock::time_point start) {
  auto peer = n.remote_actor("127.0.0.1", port);
  if (!peer)
    return "fail " + ferry::render(peer.error());
  caf::anon_send(*peer, n.name());
  caf::scoped_actor self{n.system()};
  std::string result;
  self->request(*peer, 10s, uint64_t{41})
    .receive(
      [&](uint64_t x) {
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now() - start)
                    .count();
        result = x == 42 ? "ok " + std::to_string(ms)
                         : "fail wrong answer " + std::to_string(x);
      },
      [&](caf::error& err) { result = "fail " + ferry::render(err); });
  return result;
}

} // namespace

int main(int argc, char** argv) {
  ferry::node_config cfg;
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "cluster_member: " << ferry::render(err) << '\n';
    return 2;
  }
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "cluster_member: " << ferry::render(n.error()) << '\n';
    return 2;
  }
  auto me = (*n)->system().spawn(member);
  auto port = (*n)->publish(me, 0, "127.0.0.1");
  if (!port) {
    std::cerr << "cluster_member: " << ferry::render(port.error()) << '\n';
    return 1;
  }
  std::cout << "port " << *port << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in{line};
    std::string command;
    in >> command;
    if (command == "go") {
      int64_t micros = 0;
      in >> micros;
      std::vector<uint16_t> ports;
      for (uint16_t p = 0; in >> p;)
        ports.push_back(p);
      auto start = std::chrono::system_clock::time_point{
        std::chrono::microseconds{micros}};
      std::this_thread::sleep_until(start);
      std::vector<std::string> results(ports.size());
      std::vector<std::thread> threads;
      for (size_t i = 0; i < ports.size(); ++i)
        threads.emplace_back(
          [&, i] { results[i] = meet(**n, ports[i], start); });
      for (auto& t : threads)
        t.join();
      for (size_t i = 0; i < ports.size(); ++i)
        std::cout << "result " << ports[i] << ' ' << results[i] << '\n';
      std::cout << "done" << std::endl;
    } else if (command == "report") {
      caf::scoped_actor self{(*n)->system()};
      std::cout << "received";
      self->request(me, 10s, report_atom::value)
        .receive(
          [](const std::vector<std::string>& names) {
            for (auto& name : names)
              std::cout << ' ' << name;
          },
          [](caf::error& err) { std::cout << " (" << ferry::render(err) << ")"; });
      std::cout << '\n';
      for (auto& s : (*n)->stats())
        std::cout << "link " << s.peer << " unasked=" << s.unasked_answers
                  << '\n';
      std::cout << "end" << std::endl;
    }
  }
  caf::anon_send_exit(me, caf::exit_reason::user_shutdown);
  return 0;
}
