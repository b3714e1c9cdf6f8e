// Remote actors and peers that end while a local node talks to them: a
// monitored proxy gets its down message with the remote exit reason; a
// request to an actor that ended fails naming it and its node (the link
// stays up); requests left unanswered leave the link with their requester;
// a killed peer fails the pending request at once and frees the store
// memory its message held.
//
// Each test runs a local node in the test process and starts peers
// (ferry_test_node) as child processes (node_fixture.hpp).
#include "node_fixture.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include "ferry/test/eventually.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

/// Tells B's "mortal" actor (behind `mortal`) to quit and returns the exit
/// reason of the down message `self` gets for it (none after 30 s).
caf::error stop_mortal(caf::scoped_actor& self, const caf::actor& mortal) {
  self->monitor(mortal);
  self->send(mortal, std::string{"die"});
  caf::error reason;
  bool got_down = false;
  self->receive_while([&] { return !got_down; })(
    [&](const std::string&) {},
    [&](caf::down_msg& down) {
      got_down = true;
      reason = down.reason;
    },
    caf::after(30s) >> [&] { got_down = true; });
  return reason;
}

} // namespace

TEST_F(node_fixture, MonitoringAProxyDeliversDownWhenRemoteActorQuits) {
  // Arrange
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port, "mortal");
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  caf::scoped_actor self{local().system()};
  // Act
  auto reason = stop_mortal(self, *sut);
  // Assert
  EXPECT_EQ(reason, caf::exit_reason::user_shutdown);
}

TEST_F(node_fixture, RequestToARemoteActorThatEndedNamesItAndItsNode) {
  // Arrange: the remote actor ends; its node stays connected.
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port, "mortal");
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  caf::scoped_actor self{local().system()};
  ASSERT_EQ(stop_mortal(self, *sut), caf::exit_reason::user_shutdown);
  // Act
  auto reply = ask_within<std::string>(10s, *sut, std::string{"hello"});
  // Assert: no_such_actor with the node and the reason, not link_down.
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error(),
            caf::make_error(ferry::errc::no_such_actor, reply.error().context()))
    << ferry::render(reply.error());
  auto text = ferry::render(reply.error());
  EXPECT_NE(text.find("on node B has terminated"), std::string::npos) << text;
  EXPECT_NE(text.find("user_shutdown"), std::string::npos) << text;
}

TEST_F(node_fixture, UnansweredRequestsLeaveTheLinkWhenTheirRequesterEnds) {
  // Arrange: "hole" never answers; 50 requests from one requester.
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port, "hole");
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  uint64_t while_alive = 0;
  {
    caf::scoped_actor requester{local().system()};
    for (int i = 0; i < 50; ++i)
      requester->request(*sut, 10ms, make_bytes(64));
    auto stats = local().stats("B");
    ASSERT_TRUE(stats);
    while_alive = stats->pending_requests;
    // Act: the requester ends (its requests time out unanswered).
  }
  // Assert: the link kept them while their requester lived and dropped
  // them with it (not only once the link goes down).
  auto after = local().stats("B");
  ASSERT_TRUE(after);
  EXPECT_EQ(while_alive, 50u);
  EXPECT_EQ(after->pending_requests, 0u);
}

TEST_F(node_fixture, KilledPeerFailsPendingRequestAndFreesStoreMemory) {
  // Arrange: "hole" keeps every request pending; the payload is spilled.
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port, "hole");
  ASSERT_TRUE(sut);
  caf::scoped_actor self{local().system()};
  caf::error failure;
  // Kill the peer as soon as the request is in flight (a condition, not a
  // timer: the link counts the pending request).
  std::thread killer{[&] {
    ferry::test::eventually([&] {
      auto stats = local().stats("B");
      return stats && stats->pending_requests == 1;
    });
    b.process->kill(SIGKILL);
  }};
  auto start = std::chrono::steady_clock::now();
  // Act
  self->request(*sut, 60s, make_bytes(1 << 20))
    .receive([&](uint64_t) {}, [&](caf::error& err) { failure = std::move(err); });
  killer.join();
  // Assert
  ASSERT_TRUE(failure) << "the request did not fail";
  EXPECT_EQ(failure.category(), caf::atom("ferry_fw")) << ferry::render(failure);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
  EXPECT_FALSE(b.process->wait(10s).exited);
  auto* store = local().store();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->reap());
  auto summary = store->memory_summary();
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->objects.size(), 0u);
}
