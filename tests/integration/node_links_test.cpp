// Links between actors on different nodes (`link_to` with a proxy): the
// exit of either actor reaches the other with its reason; an exit sent to a
// proxy ends the remote actor, and its monitors hear it; an unlinked pair
// no longer shares exits; when the peer's process is killed, every actor
// linked to or monitoring one of its actors hears that its node is gone
// (`remote_link_unreachable`), and node watchers get `node_down`.
//
// Each test runs a local node in the test process and a peer
// (ferry_test_node) as a child process (node_fixture.hpp), whose "mortal"
// actor echoes strings and quits with user_shutdown on "die".
#include "node_fixture.hpp"

#include "ferry/node.hpp"
#include "ferry/node_events.hpp"

#include <caf/all.hpp>

#include "ferry/test/eventually.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <optional>
#include <string>
#include <thread>

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

/// An actor that links itself to `peer` and then idles until an exit
/// message ends it.
caf::behavior linked_to(caf::event_based_actor* self, caf::actor peer) {
  self->link_to(peer);
  return {[](int32_t x) { return x; }};
}

/// An actor that, told "link", links itself to `peer` and unlinks again.
caf::behavior linked_and_unlinked(caf::event_based_actor* self,
                                  caf::actor peer) {
  return {[self, peer](const std::string&) {
    self->link_to(peer);
    self->unlink_from(peer);
  }};
}

/// Waits up to 30 s for the down message of `whom` (which `self` monitors);
/// returns its reason, or nothing.
std::optional<caf::error> down_reason(caf::scoped_actor& self,
                                      const caf::actor& whom) {
  std::optional<caf::error> result;
  bool done = false;
  self->receive_while([&] { return !done; })(
    [&](caf::down_msg& down) {
      if (down.source == whom) {
        result = down.reason;
        done = true;
      }
    },
    caf::after(30s) >> [&] { done = true; });
  return result;
}

/// Returns the number of proxies the peer `p` holds of the local node's
/// actors (its "link local" line), or -1.
int peer_proxies(peer& p) {
  auto lines = p.stats();
  auto line = lines["local"];
  auto at = line.find(" proxies=");
  return at == std::string::npos ? -1 : std::stoi(line.substr(at + 9));
}

} // namespace

TEST_F(node_fixture, RemoteActorEndingEndsTheLocalActorLinkedToIt) {
  // Arrange: a local actor links itself to B's mortal.
  auto& b = start_peer("B");
  auto mortal = local().remote_actor("127.0.0.1", b.port, "mortal");
  ASSERT_TRUE(mortal) << ferry::render(mortal.error());
  caf::scoped_actor self{local().system()};
  auto linked = local().system().spawn(linked_to, *mortal);
  self->monitor(linked);
  // Act: mortal quits.
  self->send(*mortal, std::string{"die"});
  // Assert: the linked actor ends with mortal's reason.
  auto reason = down_reason(self, linked);
  ASSERT_TRUE(reason) << "the linked local actor did not end";
  EXPECT_EQ(*reason, caf::exit_reason::user_shutdown) << ferry::render(*reason);
}

TEST_F(node_fixture, LocalActorEndingEndsTheRemoteActorLinkedToIt) {
  // Arrange: a local actor links itself to B's mortal.
  auto& b = start_peer("B");
  auto mortal = local().remote_actor("127.0.0.1", b.port, "mortal");
  ASSERT_TRUE(mortal) << ferry::render(mortal.error());
  caf::scoped_actor self{local().system()};
  self->monitor(*mortal);
  auto linked = local().system().spawn(linked_to, *mortal);
  // Act: the local actor is killed with a reason of its own.
  self->send_exit(linked, caf::exit_reason::user_shutdown);
  // Assert: mortal ends with that reason.
  auto reason = down_reason(self, *mortal);
  ASSERT_TRUE(reason) << "the remote actor did not end";
  EXPECT_EQ(*reason, caf::exit_reason::user_shutdown) << ferry::render(*reason);
}

TEST_F(node_fixture, ExitSentToAProxyEndsTheRemoteActorItsMonitorsHear) {
  // Arrange: a proxy of B's mortal, which has never sent this node anything.
  auto& b = start_peer("B");
  auto mortal = local().remote_actor("127.0.0.1", b.port, "mortal");
  ASSERT_TRUE(mortal) << ferry::render(mortal.error());
  caf::scoped_actor self{local().system()};
  self->monitor(*mortal);
  // Act
  self->send_exit(*mortal, caf::exit_reason::user_shutdown);
  // Assert
  auto reason = down_reason(self, *mortal);
  ASSERT_TRUE(reason) << "no down message for the remote actor";
  EXPECT_EQ(*reason, caf::exit_reason::user_shutdown) << ferry::render(*reason);
}

TEST_F(node_fixture, UnlinkedActorsNoLongerShareTheirExit) {
  // Arrange: a local actor links itself to B's mortal and unlinks again.
  auto& b = start_peer("B");
  auto mortal = local().remote_actor("127.0.0.1", b.port, "mortal");
  ASSERT_TRUE(mortal) << ferry::render(mortal.error());
  caf::scoped_actor self{local().system()};
  auto unlinked = local().system().spawn(linked_and_unlinked, *mortal);
  self->monitor(unlinked);
  self->send(unlinked, std::string{"link"});
  // Wait until B holds a proxy of it (the link request reached B).
  int with_proxy = -1;
  ferry::test::eventually([&] {
    with_proxy = peer_proxies(b);
    return with_proxy >= 1;
  });
  ASSERT_GE(with_proxy, 1);
  // Act: the local actor ends. Its down notice to B is posted before this
  // monitor hears of the end (the link attached to it after the monitor,
  // and CAF runs the newest attachment first), so the request below reaches
  // B after it: had the link stayed, mortal would end before answering.
  self->send_exit(unlinked, caf::exit_reason::user_shutdown);
  ASSERT_TRUE(down_reason(self, unlinked));
  // Assert: mortal lives on.
  auto reply = ask_within<std::string>(10s, *mortal, std::string{"still"});
  ASSERT_TRUE(reply) << ferry::render(reply.error());
  EXPECT_EQ(*reply, "still");
}

TEST_F(node_fixture, KilledNodeEndsLinkedAndMonitoringActorsAndIsReportedDown) {
  // Arrange: a local actor links itself to B's mortal, another monitors
  // it, and a watcher follows the nodes.
  auto& b = start_peer("B");
  auto mortal = local().remote_actor("127.0.0.1", b.port, "mortal");
  ASSERT_TRUE(mortal) << ferry::render(mortal.error());
  caf::scoped_actor self{local().system()};
  caf::scoped_actor watcher{local().system()};
  local().watch_nodes(watcher);
  self->monitor(*mortal);
  auto linked = local().system().spawn(linked_to, *mortal);
  self->monitor(linked);
  // Act: B's process is killed.
  b.process->kill(SIGKILL);
  // Assert: the monitor and the link both say the node is unreachable.
  std::optional<caf::error> mortal_down;
  std::optional<caf::error> linked_down;
  for (int i = 0; i < 2; ++i)
    self->receive([&](caf::down_msg& down) {
      if (down.source == *mortal)
        mortal_down = down.reason;
      else if (down.source == linked)
        linked_down = down.reason;
    }, caf::after(30s) >> [] {});
  ASSERT_TRUE(mortal_down);
  ASSERT_TRUE(linked_down);
  EXPECT_EQ(*mortal_down, caf::exit_reason::remote_link_unreachable)
    << ferry::render(*mortal_down);
  EXPECT_EQ(*linked_down, caf::exit_reason::remote_link_unreachable)
    << ferry::render(*linked_down);
  std::optional<ferry::node_down> gone;
  watcher->receive_while([&] { return !gone; })(
    [&](const ferry::node_up&) {},
    [&](const ferry::node_down& x) { gone = x; },
    caf::after(30s) >> [&] { gone = ferry::node_down{}; });
  EXPECT_EQ(gone->node, "B");
  EXPECT_TRUE(gone->reason);
  auto view = local().peers();
  ASSERT_EQ(view.size(), 1u);
  EXPECT_FALSE(view[0].up);
}
