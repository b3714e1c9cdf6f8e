// Node events and the view of peers (node::watch_nodes, node::peers): a
// watcher hears `node_up` when a link is made, on both nodes, and
// `node_down` with a reason when the peer goes away; the view says the same;
// an actor that stopped watching hears nothing more.
#include "two_nodes.hpp"

#include "ferry/node_events.hpp"

#include <memory>
#include <optional>
#include <string>

namespace ferry::test {
namespace {

using namespace std::chrono_literals;

caf::behavior quiet() {
  return {[](int32_t x) { return x; }};
}

/// Waits up to 10 s for a node_up on `self`; returns the node it names.
std::optional<std::string> next_up(caf::scoped_actor& self) {
  std::optional<std::string> result;
  self->receive([&](const node_up& x) { result = x.node; },
                caf::after(10s) >> [] {});
  return result;
}

/// Waits up to 10 s for a node_down on `self`.
std::optional<node_down> next_down(caf::scoped_actor& self) {
  std::optional<node_down> result;
  self->receive([&](const node_down& x) { result = x; },
                caf::after(10s) >> [] {});
  return result;
}

TEST_F(two_nodes, WatchersHearNodesComeAndGo) {
  // Arrange
  ASSERT_TRUE(start());
  caf::scoped_actor on_client{client->system()};
  // The server's watcher must end before the server's system can stop.
  auto on_server = std::make_unique<caf::scoped_actor>(server->system());
  client->watch_nodes(on_client);
  server->watch_nodes(*on_server);
  auto worker = server->system().spawn(quiet);
  // Act: the client connects.
  auto proxy = connect(*server, *client, worker);
  ASSERT_TRUE(proxy) << ferry::render(proxy.error());
  // Assert: both sides hear of the other, and their views agree.
  EXPECT_EQ(next_up(on_client), "server");
  EXPECT_EQ(next_up(*on_server), "client");
  auto view = client->peers();
  ASSERT_EQ(view.size(), 1u);
  EXPECT_EQ(view[0].node, "server");
  EXPECT_TRUE(view[0].up);
  EXPECT_FALSE(view[0].reason);
  // Act: the server node goes away.
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
  on_server.reset();
  server.reset();
  // Assert: the client hears it, with a reason, and its view says so.
  auto down = next_down(on_client);
  ASSERT_TRUE(down);
  EXPECT_EQ(down->node, "server");
  EXPECT_TRUE(down->reason);
  view = client->peers();
  ASSERT_EQ(view.size(), 1u);
  EXPECT_FALSE(view[0].up);
  EXPECT_EQ(view[0].reason, down->reason);
}

TEST_F(two_nodes, ActorThatStopsWatchingHearsNothingMore) {
  // Arrange: two watchers on the client; the first one stops watching.
  ASSERT_TRUE(start());
  caf::scoped_actor stays{client->system()};
  caf::scoped_actor leaves{client->system()};
  client->watch_nodes(leaves);
  client->watch_nodes(stays);
  client->unwatch_nodes(leaves);
  auto worker = server->system().spawn(quiet);
  // Act
  auto proxy = connect(*server, *client, worker);
  ASSERT_TRUE(proxy) << ferry::render(proxy.error());
  // Assert: events go to watchers in the order they started watching, so
  // once the one that stays has its event, the one that left would have had
  // its own.
  EXPECT_EQ(next_up(stays), "server");
  EXPECT_TRUE(leaves->mailbox().empty());
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
}

} // namespace
} // namespace ferry::test
