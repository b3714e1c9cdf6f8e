// Nodes of one process that connect to each other all at once (run under
// TSan in CI): every pair ends with one link both ways (the node with the
// lower id keeps one connection and refuses the other), a one-way message
// sent right after `remote_actor` returns arrives, and the handshakes'
// shared state (the link table, connects woken by a link the other
// connection made) is raced by as many threads as there are pairs. The
// nodes link through TCP connections, and again sharing a store, through
// same-host lanes.
#include "two_nodes.hpp"

#include <array>
#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace ferry::test {
namespace {

using namespace std::chrono_literals;

constexpr size_t n = 3;

/// Which nodes each meeting point heard from, a bit per node ("a" is bit
/// 0). Atomics, and plain function behaviors, as in concurrency_test.cpp:
/// TSan cannot see CAF's scheduler hand an actor's captured state to the
/// thread that runs it.
std::array<std::atomic<unsigned>, n> heard;

/// Meeting point `I`: remembers the names sent to it one way; answers a
/// number plus one.
template <size_t I>
caf::behavior meeting_point() {
  return {
    [](const std::string& from) {
      if (from.size() == 1 && from[0] >= 'a' && from[0] < 'a' + char{n})
        heard[I] |= 1u << (from[0] - 'a');
    },
    [](uint64_t x) { return x + 1; },
  };
}

/// Nodes that link through TCP connections (param false) or through
/// same-host lanes (true).
class crossing : public testing::TestWithParam<bool> {};

TEST_P(crossing, NodesConnectingAllToAllAtOnceAllMeet) {
  for (int round = 0; round < 5; ++round) {
    std::string store;
    if (GetParam())
      store = "ferry-test-crossing-" + std::to_string(::getpid()) + "-"
              + std::to_string(round);
    // Arrange: three nodes, each serving a meeting point.
    std::array<ferry::node_config, n> cfgs;
    std::array<std::unique_ptr<ferry::node>, n> nodes;
    std::array<caf::actor, n> points;
    std::array<uint16_t, n> ports{};
    const std::array<const char*, n> names{"a", "b", "c"};
    for (size_t i = 0; i < n; ++i) {
      nodes[i] = make_node(names[i], cfgs[i], 32, store);
      ASSERT_TRUE(nodes[i]);
      heard[i] = 0;
    }
    points[0] = nodes[0]->system().spawn(meeting_point<0>);
    points[1] = nodes[1]->system().spawn(meeting_point<1>);
    points[2] = nodes[2]->system().spawn(meeting_point<2>);
    for (size_t i = 0; i < n; ++i) {
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
    // A one-way message precedes its sender's request on the link, and the
    // requests were answered: every name has arrived.
    for (size_t j = 0; j < n; ++j)
      EXPECT_EQ(heard[j].load(), ((1u << n) - 1) & ~(1u << j))
        << "round " << round << ": what " << names[j] << " heard";
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(nodes[i]->stats().size(), n - 1)
        << "round " << round << ": one link per pair, " << names[i] << " has "
        << nodes[i]->stats().size();
      for (size_t j = 0; j < n; ++j)
        if (i != j) {
          auto stats = nodes[i]->stats(names[j]);
          ASSERT_TRUE(stats);
          EXPECT_EQ(stats->lane, GetParam());
        }
    }
    for (auto& point : points)
      caf::anon_send_exit(point, caf::exit_reason::user_shutdown);
    for (auto& node : nodes)
      node.reset();
    if (!store.empty())
      static_cast<void>(ferry::store::object_store::remove(store));
  }
}

INSTANTIATE_TEST_SUITE_P(ways, crossing, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "lane" : "tcp";
                         });

} // namespace
} // namespace ferry::test
