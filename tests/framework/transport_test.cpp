// A node's connections as a peer's socket sees them (transport/connection,
// transport/listener, node/handshake): a TCP peer that connects and says
// nothing costs the node no CPU and is dropped after the handshake timeout;
// ten thousand connections opened and dropped leave the node serving; two
// nodes that connect to each other at once while their actors already
// stream keep one connection and lose nothing; a node that stops sends what
// it queued before its links close.
#include "two_nodes.hpp"

#include "ferry/test/eventually.hpp"
#include "ferry/test/loopback.hpp"
#include "ferry/test/tcp_relay.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

namespace ferry::test {
namespace {

/// Waits up to `timeout` for the peer to close `fd` (reading what it sends
/// meanwhile); returns whether it did.
bool closed_by_peer(int fd, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0)
      continue;
    auto n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0)
      return true;
  }
  return false;
}

/// Returns whether bytes from the peer arrived on `fd` within `timeout`
/// (they are left unread).
bool bytes_arrived(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(timeout.count())) > 0;
}

/// Returns the CPU time of this process's I/O threads (named "ferry.io"),
/// in nanoseconds, from the scheduler's per-thread accounting, and how many
/// there are.
std::pair<std::chrono::nanoseconds, int> io_threads() {
  std::chrono::nanoseconds total{0};
  int count = 0;
  for (auto& task : std::filesystem::directory_iterator{"/proc/self/task"}) {
    std::ifstream comm{task.path() / "comm"};
    std::string name;
    std::getline(comm, name);
    if (name != "ferry.io")
      continue;
    ++count;
    std::ifstream stat{task.path() / "schedstat"};
    uint64_t on_cpu = 0;
    if (stat >> on_cpu)
      total += std::chrono::nanoseconds{on_cpu};
  }
  return {total, count};
}

/// Returns the CPU time of this process's I/O threads.
std::chrono::nanoseconds io_thread_cpu_time() {
  return io_threads().first;
}

/// Answers an integer with itself.
caf::behavior echo(caf::event_based_actor*) {
  return {
    [](int32_t x) { return x; },
  };
}

/// Asks `dest` from `from` to echo `x`; its answer, or -1.
int32_t ask(ferry::node& from, const caf::actor& dest, int32_t x) {
  caf::scoped_actor self{from.system()};
  int32_t result = -1;
  self->request(dest, 10s, x).receive([&](int32_t y) { result = y; },
                                      [&](caf::error&) {});
  return result;
}

/// Answers an integer with itself; counts the strings it gets.
caf::behavior counter(caf::event_based_actor*, std::atomic<int>* got) {
  return {
    [](int32_t x) { return x; },
    [got](const std::string&) { ++*got; },
  };
}

class transport : public two_nodes {};

TEST_F(transport, SilentPeerCostsNoCPUAndIsDroppedAfterTheHandshakeTimeout) {
  // Arrange: a handshake timeout of 1 s; what the node's I/O threads cost
  // without the peer, over as long. They run every connection (its reads,
  // its timers): a peer's cost shows there, not in the other threads that
  // the test's machine and CAF's scheduler keep busy.
  server_cfg.handshake_timeout = 1s;
  ASSERT_TRUE(start());
  auto port = server->publish(server->system().spawn(echo));
  ASSERT_TRUE(port) << ferry::render(port.error());
  // A thread that has not been scheduled yet has used no CPU time.
  ASSERT_GT(io_threads().second, 0) << "no thread named ferry.io";
  auto idle_before = io_thread_cpu_time();
  std::this_thread::sleep_for(1s);
  auto idle = io_thread_cpu_time() - idle_before;
  auto fd = ferry::test::connect_loopback(*port);
  ASSERT_GE(fd, 0);
  auto cpu_before = io_thread_cpu_time();
  auto started = std::chrono::steady_clock::now();
  // Act: the peer says nothing.
  auto dropped = closed_by_peer(fd, 10s);
  auto wall = std::chrono::steady_clock::now() - started;
  auto cpu = io_thread_cpu_time() - cpu_before;
  ::close(fd);
  // Assert: dropped after about the timeout, and what the peer cost beyond
  // the idle node is below 1 % of a core.
  EXPECT_TRUE(dropped);
  EXPECT_GE(wall, 900ms);
  EXPECT_LT(wall, 5s);
  EXPECT_LT((cpu - idle) * 100, wall)
    << "the I/O threads used " << cpu.count() << " ns of CPU in "
    << std::chrono::duration_cast<std::chrono::milliseconds>(wall).count()
    << " ms with the silent peer, " << idle.count() << " ns idle";
}

TEST_F(transport, SilentPeerIsDroppedOnceTheHandshakeTimeoutPassesOnItsClock) {
  // Arrange: a handshake timeout of 1 s on a manual clock; the node's
  // first bytes on the connection show that its handshake began.
  auto time = std::make_shared<ferry::manual_clock>();
  server_cfg.clock = time;
  server_cfg.handshake_timeout = 1s;
  ASSERT_TRUE(start());
  auto port = server->publish(server->system().spawn(echo));
  ASSERT_TRUE(port) << ferry::render(port.error());
  auto fd = ferry::test::connect_loopback(*port);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(bytes_arrived(fd, 10s));
  // Act: 999 ms pass, then 1 ms more.
  time->advance(999ms);
  auto early = closed_by_peer(fd, 100ms);
  time->advance(1ms);
  auto late = closed_by_peer(fd, 10s);
  ::close(fd);
  // Assert
  EXPECT_FALSE(early);
  EXPECT_TRUE(late);
}

TEST_F(transport, TenThousandConnectionsOpenedAndDroppedLeaveTheNodeServing) {
  // Arrange
  ASSERT_TRUE(start());
  auto port = server->publish(server->system().spawn(echo));
  ASSERT_TRUE(port) << ferry::render(port.error());
  // Act: 10,000 connections, 100 open at a time, each dropped at once;
  // every tenth says a few bytes of garbage first.
  size_t refused_connects = 0;
  for (int round = 0; round < 100; ++round) {
    std::vector<int> fds;
    for (int i = 0; i < 100; ++i) {
      auto fd = ferry::test::connect_loopback(*port);
      if (fd < 0) {
        ++refused_connects;
        continue;
      }
      if (i % 10 == 0)
        static_cast<void>(::send(fd, "junk", 4, MSG_NOSIGNAL));
      fds.push_back(fd);
    }
    for (auto fd : fds)
      ::close(fd);
  }
  // Assert: every connect was taken, and a real peer links and is answered.
  EXPECT_EQ(refused_connects, 0u);
  auto proxy = client->remote_actor("127.0.0.1", *port);
  ASSERT_TRUE(proxy) << ferry::render(proxy.error());
  EXPECT_EQ(ask(*client, *proxy, 7), 7);
}

TEST_F(transport, CrossedConnectsKeepOneConnectionAndLoseNothing) {
  // Arrange: both nodes serve a counter; each will stream 2,000 one-way
  // messages to the other right after its connect returns.
  std::atomic<int> on_server_got{0};
  std::atomic<int> on_client_got{0};
  ASSERT_TRUE(start());
  auto on_server = server->system().spawn(counter, &on_server_got);
  auto on_client = client->system().spawn(counter, &on_client_got);
  auto server_port = server->publish(on_server);
  auto client_port = client->publish(on_client);
  ASSERT_TRUE(server_port && client_port);
  constexpr int n = 2000;
  // Act: both connect at once, through relays that count connections.
  tcp_relay to_server{*server_port};
  tcp_relay to_client{*client_port};
  auto stream = [&](ferry::node& from, uint16_t port) {
    auto peer = from.remote_actor("127.0.0.1", port);
    if (!peer)
      return ferry::render(peer.error());
    for (int i = 0; i < n; ++i)
      caf::anon_send(*peer, std::string{"m"});
    return std::string{};
  };
  std::string from_client;
  std::string from_server;
  std::thread a{[&] { from_client = stream(*client, to_server.port()); }};
  std::thread b{[&] { from_server = stream(*server, to_client.port()); }};
  a.join();
  b.join();
  // Assert: one link each way round, every message in, and of the two
  // connections one carries the link.
  EXPECT_EQ(from_client, "");
  EXPECT_EQ(from_server, "");
  ferry::test::eventually(
    [&] { return on_server_got >= n && on_client_got >= n; });
  EXPECT_EQ(on_server_got.load(), n);
  EXPECT_EQ(on_client_got.load(), n);
  EXPECT_EQ(server->stats().size(), 1u);
  EXPECT_EQ(client->stats().size(), 1u);
  EXPECT_LE(to_server.connections() + to_client.connections(), 2);
  for (auto& x : {on_server, on_client})
    caf::anon_send_exit(x, caf::exit_reason::user_shutdown);
}

TEST_F(transport, StoppingNodeSendsWhatItQueuedFirst) {
  // Arrange: the client streams to the server's counter and stops at once.
  std::atomic<int> got{0};
  ASSERT_TRUE(start(4096));
  auto on_server = server->system().spawn(counter, &got);
  auto proxy = connect(*server, *client, on_server);
  ASSERT_TRUE(proxy) << ferry::render(proxy.error());
  constexpr int n = 3000;
  // Act
  for (int i = 0; i < n; ++i)
    caf::anon_send(*proxy, std::string{"m"});
  client.reset();
  // Assert: every message arrived before the link went down.
  ASSERT_TRUE(link_gone(*server, "client"));
  ferry::test::eventually([&] { return got >= n; });
  EXPECT_EQ(got.load(), n);
  caf::anon_send_exit(on_server, caf::exit_reason::user_shutdown);
}

} // namespace
} // namespace ferry::test
