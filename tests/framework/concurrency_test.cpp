// Many threads sending through one link at once (label `concurrency`: runs
// under ThreadSanitizer in CI). Two nodes live in this process, connected
// over loopback through CAF's middleman like any two nodes.
#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

namespace {

caf::behavior doubler() {
  return {
    [](int32_t x) { return x * 2; },
    [](const std::vector<std::byte>& xs) {
      return static_cast<uint64_t>(xs.size());
    },
  };
}

std::unique_ptr<ferry::node> make_node(const char* name,
                                       ferry::node_config& cfg) {
  cfg.node_name = name;
  cfg.store_enabled = false;
  cfg.default_link.window_messages = 32; // small: senders contend for credit
  auto result = ferry::node::start(cfg);
  EXPECT_TRUE(result) << ferry::render(result.error());
  return result ? std::move(*result) : nullptr;
}

} // namespace

TEST(link_concurrency, ParallelSendersThroughOneLinkAllGetTheirAnswers) {
  // Arrange
  ferry::node_config server_cfg;
  ferry::node_config client_cfg;
  auto server = make_node("server", server_cfg);
  auto client = make_node("client", client_cfg);
  ASSERT_TRUE(server && client);
  auto worker = server->system().spawn(doubler);
  auto port = server->publish(worker);
  ASSERT_TRUE(port) << ferry::render(port.error());
  auto sut = client->remote_actor("127.0.0.1", *port);
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  constexpr int threads = 4;
  constexpr int per_thread = 200;
  std::atomic<int> correct{0};
  // Act
  std::vector<std::thread> senders;
  for (int t = 0; t < threads; ++t)
    senders.emplace_back([&, t] {
      caf::scoped_actor self{client->system()};
      for (int i = 0; i < per_thread; ++i) {
        int32_t x = t * 1000 + i;
        if (i % 10 == 0) {
          std::vector<std::byte> bytes(static_cast<size_t>(i) * 100);
          self->request(*sut, 30s, std::move(bytes))
            .receive(
              [&](uint64_t n) {
                if (n == static_cast<uint64_t>(i) * 100)
                  ++correct;
              },
              [&](caf::error&) {});
        } else {
          self->request(*sut, 30s, x)
            .receive(
              [&](int32_t y) {
                if (y == 2 * x)
                  ++correct;
              },
              [&](caf::error&) {});
        }
      }
    });
  for (auto& sender : senders)
    sender.join();
  // Assert
  EXPECT_EQ(correct.load(), threads * per_thread);
  auto stats = client->stats("server");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->messages_sent, static_cast<uint64_t>(threads * per_thread));
  EXPECT_EQ(stats->pending_requests, 0u);
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
}
