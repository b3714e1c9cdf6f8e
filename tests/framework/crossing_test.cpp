// Nodes of one process that connect to each other all at once (run under
// TSan in CI): every pair ends with a link both ways, a one-way message sent
// right after `remote_actor` returns arrives, and the handshakes' shared
// state (early arrivals held and handed on, connects woken by a link the
// peer's hello made) is raced by as many threads as there are pairs.
#include "two_nodes.hpp"

#include <array>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace ferry::test {
namespace {

using namespace std::chrono_literals;

using report_atom = caf::atom_constant<caf::atom("report")>;

struct meeting_state {
  std::set<std::string> heard;
};

/// Remembers the names sent to it one way; answers a number plus one.
caf::behavior meeting_point(caf::stateful_actor<meeting_state>* self) {
  return {
    [self](const std::string& from) { self->state.heard.insert(from); },
    [](uint64_t x) { return x + 1; },
    [self](report_atom) {
      return std::vector<std::string>{self->state.heard.begin(),
                                      self->state.heard.end()};
    },
  };
}

TEST(crossing, NodesConnectingAllToAllAtOnceAllMeet) {
  for (int round = 0; round < 5; ++round) {
    // Arrange: three nodes, each serving a meeting point.
    constexpr size_t n = 3;
    std::array<ferry::node_config, n> cfgs;
    std::array<std::unique_ptr<ferry::node>, n> nodes;
    std::array<caf::actor, n> points;
    std::array<uint16_t, n> ports{};
    const std::array<const char*, n> names{"a", "b", "c"};
    for (size_t i = 0; i < n; ++i) {
      nodes[i] = make_node(names[i], cfgs[i]);
      ASSERT_TRUE(nodes[i]);
      points[i] = nodes[i]->system().spawn(meeting_point);
      auto port = nodes[i]->publish(points[i]);
      ASSERT_TRUE(port) << ferry::render(port.error());
      ports[i] = *port;
    }
    // Act: every node connects to every other at once, sends its name one
    // way and asks a question.
    std::vector<std::string> failures(n * n);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j)
        if (i != j)
          threads.emplace_back([&, i, j] {
            auto peer = nodes[i]->remote_actor("127.0.0.1", ports[j]);
            if (!peer) {
              failures[i * n + j] = ferry::render(peer.error());
              return;
            }
            caf::anon_send(*peer, std::string{names[i]});
            caf::scoped_actor self{nodes[i]->system()};
            self->request(*peer, 10s, uint64_t{1})
              .receive(
                [&](uint64_t x) {
                  if (x != 2)
                    failures[i * n + j] = "wrong answer";
                },
                [&](caf::error& err) {
                  failures[i * n + j] = ferry::render(err);
                });
          });
    for (auto& t : threads)
      t.join();
    // Assert
    for (size_t i = 0; i < n * n; ++i)
      EXPECT_EQ(failures[i], "") << "round " << round << ", " << names[i / n]
                                 << " to " << names[i % n];
    for (size_t j = 0; j < n; ++j) {
      caf::scoped_actor self{nodes[j]->system()};
      std::vector<std::string> heard;
      self->request(points[j], 10s, report_atom::value)
        .receive([&](std::vector<std::string>& x) { heard = std::move(x); },
                 [&](caf::error& err) { ADD_FAILURE() << ferry::render(err); });
      EXPECT_EQ(heard.size(), n - 1)
        << "round " << round << ": " << names[j] << " heard from "
        << heard.size() << " nodes";
    }
    for (auto& point : points)
      caf::anon_send_exit(point, caf::exit_reason::user_shutdown);
  }
}

} // namespace
} // namespace ferry::test
