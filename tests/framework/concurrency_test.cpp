// Many threads sending through one link at once (label `concurrency`: runs
// under ThreadSanitizer in CI). Two nodes live in this process, connected
// over loopback by a TCP connection like any two nodes, and each test runs
// again with the two sharing a store, linked through a same-host lane (the
// lane's reader thread in place of the connection's I/O thread).
#include "ferry/test/eventually.hpp"
#include "ferry/test/credit_waits.hpp"

#include <atomic>
#include <thread>
#include <vector>

#include "transfer/relay_sources.hpp"
#include "two_nodes.hpp"

using namespace std::chrono_literals;

namespace {

using ferry::test::await_credit_waits;
using ferry::test::connect;
using ferry::test::link_gone;

caf::behavior doubler() {
  return {
    [](int32_t x) { return x * 2; },
    [](const std::vector<std::byte>& xs) {
      return static_cast<uint64_t>(xs.size());
    },
  };
}

/// Counts byte vectors; a string asks for the count. (A plain function, like
/// `doubler`: CAF frees a stateful actor's init function on another thread,
/// which TSan reports inside CAF's uninstrumented spawn.)
std::atomic<uint64_t> counted{0};

/// While false, the counter holds on to its first byte vector, so no credit
/// goes back and senders must wait.
std::atomic<bool> gate_open{true};

caf::behavior counter() {
  return {
    [](const std::vector<std::byte>&) {
      ferry::test::eventually([] { return gate_open.load(); }, 60s, 1ms);
      ++counted;
    },
    [](const std::string&) { return counted.load(); },
  };
}

/// Two nodes racing through one link: through a TCP connection (param
/// false) or a same-host lane (true).
class link_concurrency : public ferry::test::two_nodes,
                         public testing::WithParamInterface<bool> {
protected:
  void SetUp() override {
    if (GetParam())
      share_store();
  }

  /// Checks that the link from the client takes the way of the param.
  void expect_way() {
    auto stats = client->stats("server");
    ASSERT_TRUE(stats);
    EXPECT_EQ(stats->lane, GetParam());
  }

  /// Starts both nodes (a window of 4 messages, 16 KiB on the client) with
  /// a counter on the server whose gate is closed; returns the client's
  /// proxy for it.
  caf::expected<caf::actor> start_with_closed_gate() {
    client_cfg.default_link.window_bytes = 16 << 10;
    if (!start(4))
      return caf::make_error(caf::sec::runtime_error, "a node did not start");
    counted = 0;
    gate_open = false;
    sink = server->system().spawn(counter);
    return connect(*server, *client, sink);
  }

  void TearDown() override {
    gate_open = true; // a failed test may not have opened it
    if (sink)
      caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
  }

  caf::actor sink;
};

} // namespace

TEST_P(link_concurrency, ParallelSendersThroughOneLinkAllGetTheirAnswers) {
  // Arrange
  ASSERT_TRUE(start());
  auto worker = server->system().spawn(doubler);
  auto sut = connect(*server, *client, worker);
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
  expect_way();
  auto stats = client->stats("server");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->messages_sent, static_cast<uint64_t>(threads * per_thread));
  EXPECT_EQ(stats->pending_requests, 0u);
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
}

TEST_P(link_concurrency, SendersQueueingForCreditAllGetThrough) {
  // Arrange: a window of 4 messages and 16 KiB; four threads stream 1 KiB
  // messages while a fifth sends 64 KiB ones, each of which needs the link
  // to drain (waiting senders queue for credit, first come first served).
  // The sink holds its first message until a sender has waited, so that
  // happens whichever side runs faster.
  auto sut = start_with_closed_gate();
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  constexpr int small_threads = 4;
  constexpr int small_each = 100;
  constexpr int large_count = 5;
  // Act
  std::vector<std::thread> senders;
  for (int t = 0; t < small_threads; ++t)
    senders.emplace_back([&] {
      caf::scoped_actor self{client->system()};
      for (int i = 0; i < small_each; ++i)
        self->send(*sut, std::vector<std::byte>(1 << 10));
    });
  senders.emplace_back([&] {
    caf::scoped_actor self{client->system()};
    for (int i = 0; i < large_count; ++i)
      self->send(*sut, std::vector<std::byte>(64 << 10));
  });
  auto waits = await_credit_waits(*client, "server", 1).credit_waits;
  gate_open = true;
  for (auto& sender : senders)
    sender.join();
  uint64_t received = 0;
  caf::scoped_actor self{client->system()};
  self->request(*sut, 30s, std::string{"count"})
    .receive([&](uint64_t n) { received = n; }, [&](caf::error&) {});
  // Assert
  EXPECT_EQ(received,
            static_cast<uint64_t>(small_threads * small_each + large_count));
  expect_way();
  auto stats = client->stats("server");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->send_errors, 0u);
  EXPECT_GT(waits, 0u);
}

TEST_P(link_concurrency, NodeShutsDownWhileItsPeerStillSends) {
  // Arrange: four threads stream requests to a node that goes away in the
  // middle of it (its I/O thread delivers messages while the node's links
  // and registry are destroyed).
  ASSERT_TRUE(start());
  auto worker = server->system().spawn(doubler);
  auto sut = connect(*server, *client, worker);
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  constexpr int threads = 4;
  std::atomic<int> answered{0};
  std::atomic<int> timed_out{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> senders;
  for (int t = 0; t < threads; ++t)
    senders.emplace_back([&] {
      caf::scoped_actor self{client->system()};
      for (int32_t x = 0; !stop; ++x)
        self->request(*sut, 20s, x)
          .receive([&](int32_t) { ++answered; },
                   [&](caf::error& err) {
                     if (err == caf::sec::request_timeout)
                       ++timed_out;
                     stop = true;
                   });
    });
  ASSERT_TRUE(ferry::test::eventually([&] { return answered >= 200; }));
  // Act
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
  server.reset();
  for (auto& sender : senders)
    sender.join();
  // Assert: every request got an answer or an error once the node was
  // gone (the senders ended), none waited out its timeout, and the client
  // let go of the link. It drops the link once CAF reports the connection
  // lost, which can come after the senders' errors: wait for that.
  EXPECT_EQ(timed_out.load(), 0);
  EXPECT_TRUE(link_gone(*client, "server"));
  auto stats = client->stats("server");
  ASSERT_FALSE(stats) << "the client still holds the link, with "
                      << stats->pending_requests << " pending requests";
  EXPECT_EQ(stats.error(),
            caf::make_error(ferry::errc::link_down, stats.error().context()));
  EXPECT_TRUE(client->stats().empty());
}

TEST_P(link_concurrency, ActorsBlockedOnCreditInEverySchedulerThreadGetIt) {
  // Arrange: the client's two scheduler threads both run actors that send
  // into a full window (16 KiB, 8 KiB messages), and a third actor waits to
  // run. The credit that wakes them is read on the connection's I/O thread
  // (or the lane's reader): were it read on a scheduler job, no thread would
  // be left to read it, and every message would wait for send-timeout.
  client_cfg.default_link.send_timeout = 20s;
  client_cfg.set("scheduler.max-threads", 2);
  auto sut = start_with_closed_gate();
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  constexpr uint64_t actors = 3;
  constexpr uint64_t each = 10;
  // Act
  for (uint64_t a = 0; a < actors; ++a)
    client->system().spawn([dest = *sut](caf::event_based_actor* self) {
      for (uint64_t i = 0; i < each; ++i)
        self->send(dest, std::vector<std::byte>(8 << 10));
    });
  auto waits = await_credit_waits(*client, "server", 1).credit_waits;
  gate_open = true;
  ferry::test::eventually([&] { return counted >= actors * each; });
  // Assert
  EXPECT_GT(waits, 0u);
  EXPECT_EQ(counted.load(), actors * each);
  auto stats = client->stats("server");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->send_errors, 0u);
}

INSTANTIATE_TEST_SUITE_P(ways, link_concurrency, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "lane" : "tcp";
                         });

// A node's relay table is made on the thread that starts the node and swept
// by its sweeper on a scheduler thread while links open, serve and close
// relayed objects on theirs (the sweep timing itself: relay_test.cpp, on a
// manual clock).
TEST(relay_concurrency, SweepsRaceNoOpenServeOrCloseOfTheTable) {
  // Arrange: no linger, so every sweep finds sealed-and-idle candidates.
  auto sut = std::make_shared<ferry::detail::relay_sources>(
    "relay", std::chrono::nanoseconds{0}, std::chrono::nanoseconds{0});
  std::vector<std::byte> bytes(64, std::byte{1});
  std::atomic<bool> done{false};
  std::thread sweeper{[&] {
    while (!done) {
      sut->sweep();
      sut->expire();
    }
  }};
  // Act: open, serve and close keys meanwhile.
  uint64_t answered = 0;
  for (uint64_t key = 1; key <= 2000; ++key) {
    auto source = sut->open(key, bytes, nullptr, "owner", 64);
    ASSERT_TRUE(source);
    source->landed(0, bytes.size());
    sut->serve(ferry::detail::relay_request{key, key, 0, 64}, "C",
               [&](caf::expected<ferry::detail::chunk_reply>) { ++answered; });
    sut->close(key, source, caf::make_error(ferry::errc::link_down, "gone"));
  }
  done = true;
  sweeper.join();
  // Assert: every request answered once, nothing left in the table.
  EXPECT_EQ(answered, 2000u);
  EXPECT_EQ(sut->size(), 0u);
}
