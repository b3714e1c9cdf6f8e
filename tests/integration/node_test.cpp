// Nodes and links across real processes on loopback: families per link,
// refusals, spilling, down messages, killed peers, flow control, spawning.
//
// Each test runs a local node in the test process and starts peers
// (ferry_test_node) as child processes; all nodes of one test share a store
// name of their own, removed at the end.
#include "node_fixture.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/test/child_process.hpp"
#include "ferry/test/credit_waits.hpp"

#include "ferry/serializers/errc.hpp"
#include "ferry/serializers/vector_pool.hpp"
#include "ferry/store/object_store.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace std::chrono_literals;
using ferry::test::child_process;

using namespace ferry::test;

namespace {

/// Spawns an "adder" (answers base + x) on the node listening at `port`.
caf::expected<caf::actor> spawn_adder(ferry::node& from, uint16_t port,
                                      int32_t base) {
  return from.remote_spawn("127.0.0.1", port, "adder",
                           caf::make_message(base));
}

/// Sends `count` copies of `payload` to `gate` (the peer's "gate" actor,
/// which holds what it gets unprocessed, so no credit comes back) from a
/// thread of its own, so a sender waits whatever the speed of either side;
/// opens the gate once one did (or after 10 s) and returns the link's stats
/// seen then.
ferry::link_stats send_to_closed_gate(ferry::node& from,
                                      const std::string& name, peer& owner,
                                      const caf::actor& gate,
                                      const std::vector<std::byte>& payload,
                                      int count) {
  std::thread sender{[&] {
    caf::scoped_actor self{from.system()};
    for (int i = 0; i < count; ++i)
      self->send(gate, payload);
  }};
  auto at_wait = await_credit_waits(from, name, 1);
  owner.process->write_line("open-gate");
  sender.join();
  return at_wait;
}

} // namespace

TEST_F(node_fixture, RequestsAcrossProcessesGetTypedResponses) {
  // Arrange
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  // Act
  auto text = ask<std::string>(*sut, std::string{"ferry"});
  auto number = ask<int32_t>(*sut, int32_t{41});
  auto rec = ask<ferry::test::record>(*sut, ferry::test::make_record(7, 256));
  // Assert
  ASSERT_TRUE(text) << ferry::render(text.error());
  EXPECT_EQ(*text, "yrref");
  ASSERT_TRUE(number) << ferry::render(number.error());
  EXPECT_EQ(*number, 42);
  ASSERT_TRUE(rec) << ferry::render(rec.error());
  auto expected = ferry::test::make_record(7, 256);
  expected.id = 8;
  EXPECT_EQ(*rec, expected);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->messages_sent, 3u);
  EXPECT_EQ(stats->messages_received, 3u);
  EXPECT_EQ(stats->pending_requests, 0u);
}

TEST_F(node_fixture, LinksOfOneNodeUseDifferentFamiliesAtOnce) {
  // Arrange
  auto& b = start_peer("B");
  auto& c = start_peer("C");
  ferry::link_config to_b;
  to_b.serializers = {"cereal.portable"};
  ferry::link_config to_c;
  to_c.serializers = {"msgpack"};
  cfg.link("B", to_b).link("C", to_c);
  auto proxy_b = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(proxy_b) << ferry::render(proxy_b.error());
  auto proxy_c = local().remote_actor("127.0.0.1", c.port);
  ASSERT_TRUE(proxy_c) << ferry::render(proxy_c.error());
  // Act
  auto from_b = ask<ferry::test::record>(*proxy_b, ferry::test::make_record(1, 8));
  auto from_c = ask<ferry::test::record>(*proxy_c, ferry::test::make_record(2, 8));
  // Assert
  ASSERT_TRUE(from_b) << ferry::render(from_b.error());
  ASSERT_TRUE(from_c) << ferry::render(from_c.error());
  EXPECT_EQ(from_b->id, 2);
  EXPECT_EQ(from_c->id, 3);
  auto stats_b = local().stats("B");
  auto stats_c = local().stats("C");
  ASSERT_TRUE(stats_b && stats_c);
  EXPECT_EQ(stats_b->sent_by_family["cereal.portable"], 1u);
  EXPECT_EQ(stats_c->sent_by_family["msgpack"], 1u);
  EXPECT_NE(b.stats()["local"].find("in:cereal.portable=1"), std::string::npos);
  EXPECT_NE(c.stats()["local"].find("in:msgpack=1"), std::string::npos);
}

TEST_F(node_fixture, PeerThatRefusesAFamilyGetsTheNextOne) {
  // Arrange: C refuses cereal.binary; local prefers it.
  auto& c = start_peer("C", {"--ferry.link.deserializers=[\"msgpack\", \"caf\"]"});
  cfg.default_link.serializers = {"cereal.binary", "msgpack"};
  auto sut = local().remote_actor("127.0.0.1", c.port);
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  // Act
  auto rec = ask<ferry::test::record>(*sut, ferry::test::make_record(5, 4));
  auto only_cereal = ask<int32_t>(*sut, ferry::test::cereal_only{21});
  // Assert
  ASSERT_TRUE(rec) << ferry::render(rec.error());
  auto stats = local().stats("C");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->send_families, std::vector<std::string>{"msgpack"});
  EXPECT_EQ(stats->sent_by_family["msgpack"], 1u);
  ASSERT_FALSE(only_cereal);
  EXPECT_EQ(only_cereal.error().category(), caf::atom("ferry_ser"));
  EXPECT_NE(ferry::render(only_cereal.error()).find("test.cereal_only"),
            std::string::npos)
    << ferry::render(only_cereal.error());
}

TEST_F(node_fixture, HandshakeWithoutCommonFamilyFailsNamingBothLists) {
  // Arrange
  auto& c = start_peer("C", {"--ferry.link.deserializers=[\"msgpack\"]"});
  cfg.default_link.serializers = {"cereal.binary"};
  // Act
  auto sut = local().remote_actor("127.0.0.1", c.port);
  // Assert
  ASSERT_FALSE(sut);
  EXPECT_EQ(sut.error(), caf::make_error(ferry::errc::no_common_family,
                                         sut.error().context()));
  auto text = ferry::render(sut.error());
  EXPECT_NE(text.find("[cereal.binary]"), std::string::npos) << text;
  EXPECT_NE(text.find("[msgpack]"), std::string::npos) << text;
}

TEST_F(node_fixture, LargeFrameOnSameHostTravelsThroughStore) {
  // Arrange
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  auto payload = make_bytes(4 << 20);
  // Act
  auto hash = ask<uint64_t>(*sut, payload);
  // Assert
  ASSERT_TRUE(hash) << ferry::render(hash.error());
  EXPECT_EQ(*hash, fnv1a(payload));
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_TRUE(stats->same_host);
  EXPECT_GE(stats->bytes_spilled_sent, uint64_t{4} << 20);
  EXPECT_LT(stats->bytes_inline_sent, uint64_t{64} << 10);
}

TEST_F(node_fixture, LargeArrayUnderCerealSpillsItsElementsWithoutACopy) {
  // Arrange: cereal.binary splits a large byte vector into its size tag
  // (inline) and a view of its elements (spilled as they are).
  auto& b = start_peer("B");
  cfg.default_link.serializers = {"cereal.binary"};
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  auto payload = make_bytes(4 << 20);
  // Act
  auto hash = ask<uint64_t>(*sut, payload);
  // Assert
  ASSERT_TRUE(hash) << ferry::render(hash.error());
  EXPECT_EQ(*hash, fnv1a(payload));
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->sent_by_family["cereal.binary"], 1u);
  EXPECT_EQ(stats->bytes_spilled_sent, uint64_t{4} << 20);
}

TEST_F(node_fixture, LargeArrayUnderCerealAcrossHostsIsPulledAsItsElements) {
  // Arrange
  auto& b = start_peer("B", {}, true);
  cfg.default_link.serializers = {"cereal.portable"};
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  auto payload = make_bytes(12 << 20); // above the 8 MiB pull threshold
  // Act
  auto hash = ask<uint64_t>(*sut, payload);
  // Assert
  ASSERT_TRUE(hash) << ferry::render(hash.error());
  EXPECT_EQ(*hash, fnv1a(payload));
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->sent_by_family["cereal.portable"], 1u);
  EXPECT_EQ(stats->bytes_pulled_by_peer, uint64_t{12} << 20);
}

TEST_F(node_fixture, LargeFrameWithoutSharedStoreTravelsInline) {
  // Arrange: B uses a store of its own, as a node on another host would.
  auto& b = start_peer("B", {}, true);
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  auto payload = make_bytes(4 << 20);
  // Act
  auto hash = ask<uint64_t>(*sut, payload);
  // Assert
  ASSERT_TRUE(hash) << ferry::render(hash.error());
  EXPECT_EQ(*hash, fnv1a(payload));
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_FALSE(stats->same_host);
  EXPECT_EQ(stats->bytes_spilled_sent, 0u);
  EXPECT_GE(stats->bytes_inline_sent, uint64_t{4} << 20);
}

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

TEST_F(node_fixture, RemoteSenderKeepsOneProxyAcrossMessages) {
  // Arrange: one sender; nothing on B holds the proxy that stands for it
  // there between its two requests.
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port, "mirror");
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  caf::scoped_actor self{local().system()};
  auto ask_id = [&](int64_t x) {
    uint64_t id = 0;
    self->request(*sut, 30s, x).receive([&](uint64_t y) { id = y; },
                                        [&](caf::error&) {});
    return id;
  };
  // Act
  auto first = ask_id(1);
  auto second = ask_id(2);
  // Assert
  EXPECT_NE(first, 0u);
  EXPECT_EQ(first, second);
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
  // them with it (they stayed until the link went down before).
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
    for (int i = 0; i < 3000; ++i) {
      auto stats = local().stats("B");
      if (stats && stats->pending_requests == 1)
        break;
      std::this_thread::sleep_for(10ms);
    }
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

TEST_F(node_fixture, RemoteSpawnStartsARegisteredActorTypeByName) {
  // Arrange
  auto& b = start_peer("B");
  // Act
  auto sut = spawn_adder(local(), b.port, int32_t{10});
  // Assert
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  auto sum = ask<int32_t>(*sut, int32_t{5});
  ASSERT_TRUE(sum) << ferry::render(sum.error());
  EXPECT_EQ(*sum, 15);
  caf::anon_send_exit(*sut, caf::exit_reason::user_shutdown);
}

TEST_F(node_fixture, SpawnedActorsThatEndAreForgottenByTheLink) {
  // Arrange: 20 actors spawned on B for this node, all still alive.
  auto& b = start_peer("B");
  std::vector<caf::actor> spawned;
  for (int i = 0; i < 20; ++i) {
    auto x = spawn_adder(local(), b.port, int32_t{i});
    ASSERT_TRUE(x) << ferry::render(x.error());
    spawned.push_back(*x);
  }
  auto alive = b.stats()["local"];
  // Act: every one of them ends.
  for (auto& x : spawned)
    caf::anon_send_exit(x, caf::exit_reason::user_shutdown);
  std::string after;
  for (int i = 0; i < 100; ++i) {
    after = b.stats()["local"];
    if (after.find(" spawned=0") != std::string::npos)
      break;
    std::this_thread::sleep_for(50ms);
  }
  // Assert: B held them while they lived and let go once they ended (it
  // kept a handle to each until the link went down before).
  EXPECT_NE(alive.find(" spawned=20"), std::string::npos) << alive;
  EXPECT_NE(after.find(" spawned=0"), std::string::npos) << after;
}

TEST_F(node_fixture, SpawnsBeyondMaxSpawnedActorsAreRefusedUntilOneEnds) {
  // Arrange: B lets a peer keep 2 live actors spawned there; a spawn that
  // fails (unknown type) gives its slot back.
  auto& b = start_peer("B", {"--ferry.link.max-spawned-actors=2"});
  auto unknown = local().remote_spawn("127.0.0.1", b.port, "no-such-type",
                                      caf::make_message());
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(),
            static_cast<uint8_t>(ferry::errc::no_such_actor));
  std::vector<caf::actor> spawned;
  for (int i = 0; i < 2; ++i) {
    auto x = spawn_adder(local(), b.port, int32_t{i});
    ASSERT_TRUE(x) << ferry::render(x.error());
    spawned.push_back(*x);
  }
  // Act
  auto third = spawn_adder(local(), b.port, int32_t{2});
  caf::anon_send_exit(spawned[0], caf::exit_reason::user_shutdown);
  caf::expected<caf::actor> after_one_ended{caf::error{}};
  for (int i = 0; i < 100; ++i) {
    after_one_ended = spawn_adder(local(), b.port, int32_t{3});
    if (after_one_ended)
      break;
    std::this_thread::sleep_for(50ms);
  }
  // Assert: the third is refused naming the setting, B holds two actors,
  // and the slot of the one that ended serves a new spawn.
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().code(),
            static_cast<uint8_t>(ferry::errc::too_many_actors))
    << ferry::render(third.error());
  auto text = ferry::render(third.error());
  EXPECT_NE(text.find("max-spawned-actors"), std::string::npos) << text;
  EXPECT_NE(text.find("\"adder\""), std::string::npos) << text;
  EXPECT_NE(b.stats()["local"].find(" spawned=2"), std::string::npos);
  ASSERT_TRUE(after_one_ended) << ferry::render(after_one_ended.error());
  auto sum = ask<int32_t>(*after_one_ended, int32_t{5});
  ASSERT_TRUE(sum) << ferry::render(sum.error());
  EXPECT_EQ(*sum, 8);
  caf::anon_send_exit(spawned[1], caf::exit_reason::user_shutdown);
  caf::anon_send_exit(*after_one_ended, caf::exit_reason::user_shutdown);
}

TEST_F(node_fixture, LinkWithoutSpawnsRefusesEveryRemoteSpawn) {
  // Arrange
  auto& b = start_peer("B", {"--ferry.link.max-spawned-actors=0"});
  // Act
  auto sut = spawn_adder(local(), b.port, int32_t{1});
  // Assert: refused with how to allow it; B spawned nothing, and its
  // exposed actors still answer.
  ASSERT_FALSE(sut);
  EXPECT_EQ(sut.error().code(),
            static_cast<uint8_t>(ferry::errc::too_many_actors));
  auto text = ferry::render(sut.error());
  EXPECT_NE(text.find("allows no spawns"), std::string::npos) << text;
  EXPECT_NE(b.stats()["local"].find(" spawned=0"), std::string::npos);
  auto echo = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(echo) << ferry::render(echo.error());
  auto back = ask<std::string>(*echo, std::string{"still here"});
  ASSERT_TRUE(back) << ferry::render(back.error());
  EXPECT_EQ(*back, "ereh llits");
}

TEST_F(node_fixture, ActorThatThrowsWhileSpawnedIsRefusedAndFreesItsSlot) {
  // Arrange: B keeps one live actor spawned for this node at most.
  auto& b = start_peer("B", {"--ferry.link.max-spawned-actors=1"});
  // Act: the first spawn throws in the actor's constructor on B.
  auto thrown = local().remote_spawn("127.0.0.1", b.port, "picky-adder",
                                     caf::make_message(int32_t{-1}));
  auto next = local().remote_spawn("127.0.0.1", b.port, "picky-adder",
                                   caf::make_message(int32_t{1}));
  // Assert: an error naming the type and what was thrown; B lives on, and
  // the slot the failed spawn took serves the next one.
  ASSERT_FALSE(thrown);
  EXPECT_EQ(thrown.error().code(),
            static_cast<uint8_t>(ferry::errc::decode_failed));
  auto text = ferry::render(thrown.error());
  EXPECT_NE(text.find("\"picky-adder\""), std::string::npos) << text;
  EXPECT_NE(text.find("got -1"), std::string::npos) << text;
  ASSERT_TRUE(next) << ferry::render(next.error());
  auto sum = ask<int32_t>(*next, int32_t{5});
  ASSERT_TRUE(sum) << ferry::render(sum.error());
  EXPECT_EQ(*sum, 6);
  EXPECT_NE(b.stats()["local"].find(" spawned=1"), std::string::npos);
  caf::anon_send_exit(*next, caf::exit_reason::user_shutdown);
  // B shuts down as usual: the actor that threw left nothing running there.
  b.process->close_stdin();
  auto ended = b.process->wait(10s);
  EXPECT_TRUE(ended.ok()) << ferry::test::to_string(ended);
}

TEST_F(node_fixture, RemoteSpawnOfUnknownTypeFailsWithHowToFix) {
  // Arrange
  auto& b = start_peer("B");
  // Act
  auto sut = local().remote_spawn("127.0.0.1", b.port, "no-such-type",
                                  caf::make_message());
  // Assert
  ASSERT_FALSE(sut);
  auto text = ferry::render(sut.error());
  EXPECT_NE(text.find("add_actor_type"), std::string::npos) << text;
}

TEST_F(node_fixture, FastSenderStaysWithinTheCreditWindow) {
  // Arrange: the window holds 16 messages, far fewer than the 300 sent,
  // and 4 MiB, room for 128 of them. B's "gate" holds them unprocessed
  // until the sender waited, so it waits however fast either side runs.
  auto& b = start_peer("B");
  cfg.default_link.window_messages = 16;
  cfg.default_link.window_bytes = uint64_t{4} << 20;
  auto sut = local().remote_actor("127.0.0.1", b.port, "gate");
  ASSERT_TRUE(sut);
  auto chunk = make_bytes(32 << 10);
  // Act
  auto at_wait = send_to_closed_gate(local(), "B", b, *sut, chunk, 300);
  auto count = ask<uint64_t>(*sut, std::string{"count"});
  // Assert: the message count held the sender back, not the bytes.
  EXPECT_GT(at_wait.credit_waits, 0u);
  ASSERT_TRUE(count) << ferry::render(count.error());
  EXPECT_EQ(*count, 300u);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_LE(stats->peak_in_flight_bytes, 16u * ((32 << 10) + 1024));
  EXPECT_EQ(stats->send_errors, 0u);
}

TEST_F(node_fixture, ResponsesToOwnRequestsAreTakenBeyondTheHeldLimit) {
  // Arrange: this node holds at most 2 of B's messages unprocessed; a
  // requester makes 20 requests before it reads any response.
  auto& b = start_peer("B");
  cfg.default_link.max_held_messages = 2;
  auto echo = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(echo) << ferry::render(echo.error());
  caf::scoped_actor self{local().system()};
  std::vector<caf::response_handle<caf::blocking_actor,
                                   caf::message, true>> handles;
  for (int32_t i = 0; i < 20; ++i)
    handles.push_back(self->request(*echo, 30s, i));
  // Act: wait until all 20 responses are held in the requester's mailbox,
  // then read them.
  uint64_t held = 0;
  for (int i = 0; i < 1000 && held < 20; ++i) {
    std::this_thread::sleep_for(10ms);
    auto stats = local().stats("B");
    ASSERT_TRUE(stats);
    held = stats->held_messages;
  }
  std::vector<int32_t> answers;
  for (auto& handle : handles)
    handle.receive([&](int32_t x) { answers.push_back(x); },
                   [&](caf::error& err) {
                     ADD_FAILURE() << ferry::render(err);
                   });
  // Assert: the requester asked for them, so none was refused.
  EXPECT_EQ(held, 20u);
  ASSERT_EQ(answers.size(), 20u);
  for (int32_t i = 0; i < 20; ++i)
    EXPECT_EQ(answers[i], i + 1);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->refusals, 0u);
  EXPECT_EQ(stats->held_messages, 0u);
}

TEST_F(node_fixture, StoreFramesCountAgainstTheCreditWindow) {
  // Arrange: same host, so 1 MiB messages travel as store objects. The
  // window holds 4 MiB but many more messages, so only the bytes can hold
  // the sender back. (A store frame used to count as its ticket's few bytes:
  // the sender never waited, and the decoded copies piled up in a slow
  // actor's mailbox.) B's "gate" holds them unprocessed until the sender
  // waited, so it returns no credit however fast either side runs.
  store_bytes_ = uint64_t{32} << 20;
  auto& b = start_peer("B");
  cfg.default_link.window_messages = 4096;
  cfg.default_link.window_bytes = uint64_t{4} << 20;
  auto sut = local().remote_actor("127.0.0.1", b.port, "gate");
  ASSERT_TRUE(sut);
  auto chunk = make_bytes(1 << 20);
  // Act
  auto at_wait = send_to_closed_gate(local(), "B", b, *sut, chunk, 100);
  auto count = ask<uint64_t>(*sut, std::string{"count"});
  // Assert: at most three messages of a little over 1 MiB fit in 4 MiB.
  ASSERT_TRUE(count) << ferry::render(count.error());
  EXPECT_EQ(*count, 100u);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_TRUE(stats->same_host);
  EXPECT_EQ(stats->bytes_spilled_sent, uint64_t{100} << 20);
  EXPECT_EQ(stats->send_errors, 0u);
  EXPECT_GT(at_wait.credit_waits, 0u);
  EXPECT_GE(stats->peak_in_flight_bytes, uint64_t{1} << 20);
  EXPECT_LE(stats->peak_in_flight_bytes, uint64_t{4} << 20);
}

TEST_F(node_fixture, SenderWithoutCreditGetsSendTimeoutWhileTheLinkStaysUp) {
  // Arrange: B is stopped (SIGSTOP), so the two messages of the window stay
  // unacknowledged; its connection stays open.
  auto& b = start_peer("B");
  cfg.default_link.window_messages = 2;
  cfg.default_link.batch_messages = 1;
  cfg.default_link.send_timeout = std::chrono::milliseconds{300};
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  // Stopped for sure: a B still running could return the credit of "one"
  // and let "three" go (it then waits out the request's timeout).
  ASSERT_TRUE(b.process->stop());
  auto stopped = local().stats("B");
  ASSERT_TRUE(stopped) << ferry::render(stopped.error());
  caf::scoped_actor self{local().system()};
  self->send(*sut, std::string{"one"});
  self->send(*sut, std::string{"two"});
  // Act
  caf::error err;
  self->request(*sut, 10s, std::string{"three"})
    .receive([](const std::string&) {}, [&](caf::error& x) { err = x; });
  b.process->kill(SIGCONT);
  // Assert: send_timeout (not link_down), naming the peer and the setting;
  // once B runs again and its credit is back (which may take longer than
  // the 300 ms a send waits, on a slow machine) the link carries messages
  // as before.
  EXPECT_EQ(err, caf::make_error(ferry::errc::send_timeout, err.context()))
    << ferry::render(err);
  auto text = ferry::render(err);
  EXPECT_NE(text.find("no credit from node B within 300 ms"),
            std::string::npos)
    << text;
  EXPECT_NE(text.find("send-timeout"), std::string::npos) << text;
  bool credit_back = false;
  for (int i = 0; i < 1000 && !credit_back; ++i) {
    auto now = local().stats("B");
    ASSERT_TRUE(now) << ferry::render(now.error());
    credit_back = now->credits_received > stopped->credits_received;
    if (!credit_back)
      std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(credit_back);
  auto after = ask<std::string>(*sut, std::string{"four"});
  ASSERT_TRUE(after) << ferry::render(after.error());
  EXPECT_EQ(*after, "ruof");
}

TEST_F(node_fixture, MessageAboveTheWindowIsNotStarvedBySmallerOnes) {
  // Arrange: a 4 MiB window of 16 messages to B's "gate", which holds what
  // it gets unprocessed until opened. One thread streams 600 messages of
  // 32 KiB; a 6 MiB message, more than the window, needs the link to drain
  // first. The gate opens once both wait for credit, the stream first, so
  // the order they queue in does not depend on how fast any thread runs.
  auto& b = start_peer("B");
  cfg.default_link.window_messages = 16;
  cfg.default_link.window_bytes = uint64_t{4} << 20;
  auto sut = local().remote_actor("127.0.0.1", b.port, "gate");
  ASSERT_TRUE(sut);
  auto small = make_bytes(32 << 10);
  auto large = make_bytes(6 << 20);
  std::atomic<int> sent{0};
  std::thread stream{[&] {
    caf::scoped_actor self{local().system()};
    for (int i = 0; i < 600; ++i) {
      self->send(*sut, small);
      ++sent;
    }
  }};
  auto stream_waits = await_credit_waits(local(), "B", 1).credit_waits;
  // Act: senders take credit in the order they came, so the large message
  // goes once the 16 messages in flight and the stream's waiting one are
  // through, not after the whole stream: the stream's next message queues
  // behind it.
  int sent_before_large = -1;
  std::thread large_sender{[&] {
    caf::scoped_actor self{local().system()};
    self->send(*sut, large);
    sent_before_large = sent;
  }};
  auto both_waits = await_credit_waits(local(), "B", 2).credit_waits;
  b.process->write_line("open-gate");
  large_sender.join();
  stream.join();
  auto count = ask<uint64_t>(*sut, std::string{"count"});
  // Assert: 16 went before the stream waited, and one more once the gate
  // opened; more only if this thread was held up after its send returned.
  // Starved, the large message would have gone after all 600.
  EXPECT_EQ(stream_waits, 1u);
  EXPECT_EQ(both_waits, 2u);
  EXPECT_GE(sent_before_large, 16);
  EXPECT_LT(sent_before_large, 64);
  ASSERT_TRUE(count) << ferry::render(count.error());
  EXPECT_EQ(*count, 601u);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->send_errors, 0u);
}

TEST_F(node_fixture, BurstOfSmallMessagesTravelsInBatchesInOrder) {
  // Arrange: with a 10 s gap every message after the first is part of the
  // burst; batches of at most 16.
  auto& b = start_peer("B");
  cfg.default_link.batch_gap = std::chrono::seconds{10};
  cfg.default_link.batch_messages = 16;
  auto sut = local().remote_actor("127.0.0.1", b.port, "sequence");
  ASSERT_TRUE(sut);
  caf::scoped_actor self{local().system()};
  // Act: the request joins the last batch (the flusher sends it).
  for (int64_t i = 0; i < 1000; ++i)
    self->send(*sut, i);
  auto answer = ask<std::string>(*sut, std::string{"report"});
  // Assert
  ASSERT_TRUE(answer) << ferry::render(answer.error());
  EXPECT_EQ(*answer, "1000 1000");
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  // How full each batch gets depends on when the flusher runs; each holds
  // 2 to 16 messages and they add up to at most all of them.
  EXPECT_GE(stats->batches_sent, 1u);
  EXPECT_LE(stats->messages_batched, 1001u);
  EXPECT_GE(stats->messages_batched, 2 * stats->batches_sent);
  EXPECT_LE(stats->messages_batched, 16 * stats->batches_sent);
}

TEST_F(node_fixture, WithoutBatchingEveryMessageTravelsAlone) {
  // Arrange
  auto& b = start_peer("B");
  cfg.default_link.batch_gap = std::chrono::seconds{10};
  cfg.default_link.batch_messages = 1;
  auto sut = local().remote_actor("127.0.0.1", b.port, "sequence");
  ASSERT_TRUE(sut);
  caf::scoped_actor self{local().system()};
  // Act
  for (int64_t i = 0; i < 200; ++i)
    self->send(*sut, i);
  auto answer = ask<std::string>(*sut, std::string{"report"});
  // Assert
  ASSERT_TRUE(answer) << ferry::render(answer.error());
  EXPECT_EQ(*answer, "200 200");
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->batches_sent, 0u);
}

TEST_F(node_fixture, UnregisteredTypeFailsWithHowToFix) {
  // Arrange
  struct not_registered {
    int x;
  };
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  // Act
  auto reply = ask<int32_t>(*sut, not_registered{1});
  // Assert
  ASSERT_FALSE(reply);
  auto text = ferry::render(reply.error());
  EXPECT_NE(text.find("add_message_type"), std::string::npos) << text;
}

TEST_F(node_fixture, ThreeNodesExchangeThroughTheirOwnLinks) {
  // Arrange
  auto& b = start_peer("B");
  auto& c = start_peer("C");
  auto proxy_b = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(proxy_b) << ferry::render(proxy_b.error());
  auto proxy_c = local().remote_actor("127.0.0.1", c.port);
  ASSERT_TRUE(proxy_c) << ferry::render(proxy_c.error());
  // Act
  auto reply_b = ask<std::string>(*proxy_b, std::string{"abc"});
  auto reply_c = ask<std::string>(*proxy_c, std::string{"xyz"});
  // Assert
  ASSERT_TRUE(reply_b && reply_c);
  EXPECT_EQ(*reply_b, "cba");
  EXPECT_EQ(*reply_c, "zyx");
  EXPECT_EQ(local().stats().size(), 2u);
}

TEST_F(node_fixture, HugeFrameAcrossHostsIsPulledInChunks) {
  // Arrange: B has a store of its own (another host, as far as ferry knows).
  auto& b = start_peer("B", {}, true);
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  auto payload = make_bytes(24 << 20); // above the 8 MiB pull threshold
  // Act
  auto hash = ask<uint64_t>(*sut, payload);
  // Assert
  ASSERT_TRUE(hash) << ferry::render(hash.error());
  EXPECT_EQ(*hash, fnv1a(payload));
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->bytes_pulled_by_peer, uint64_t{24} << 20);
  EXPECT_LT(stats->bytes_inline_sent, uint64_t{1} << 20);
}

class vector_pool_across : public node_fixture,
                           public ::testing::WithParamInterface<bool> {};

TEST_P(vector_pool_across, LargeVectorLandsInTheMemoryOfAnEarlierOne) {
  // Arrange: B shares the store (decoded from it) or has its own (pulled in
  // chunks, above the 8 MiB threshold); this node keeps vectors from 1 MiB.
  bool other_host = GetParam();
  cfg.vector_pool.min_bytes = 1 << 20;
  auto& b = start_peer("B", {}, other_host);
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  auto reused_before = ferry::serializers::vector_pool_stats().reused;
  caf::scoped_actor self{local().system()};
  auto fetch = [&](uint64_t n, int32_t fill, const std::byte*& memory) {
    // Reads the answer in place: a vector moved out of its message stays
    // with its new owner instead of going back to the pool.
    bool ok = false;
    self->request(*sut, 30s, n, fill)
      .receive(
        [&](const std::vector<std::byte>& xs) {
          memory = xs.data();
          ok = xs.size() == n
               && std::all_of(xs.begin(), xs.end(), [&](std::byte x) {
                    return x == static_cast<std::byte>(fill);
                  });
        },
        [&](caf::error& err) { ADD_FAILURE() << ferry::render(err); });
    return ok;
  };
  const std::byte* first = nullptr;
  const std::byte* second = nullptr;
  // Act: 24 MiB of 0x11, gone once read; then 20 MiB of 0x22.
  ASSERT_TRUE(fetch(uint64_t{24} << 20, 0x11, first));
  ASSERT_TRUE(fetch(uint64_t{20} << 20, 0x22, second));
  // Assert: the second answer reused the first one's memory, every byte its
  // own.
  EXPECT_EQ(second, first);
  EXPECT_GE(ferry::serializers::vector_pool_stats().reused, reused_before + 1);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->bytes_pulled > 0, other_host);
  EXPECT_EQ(stats->bytes_spilled_received > 0, !other_host);
}

INSTANTIATE_TEST_SUITE_P(hosts, vector_pool_across,
                         ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "other_host" : "same_host";
                         });

TEST_F(node_fixture, MessagesBehindAPulledOneKeepTheirOrder) {
  // Arrange
  auto& b = start_peer("B", {}, true);
  auto sut = local().remote_actor("127.0.0.1", b.port, "slow");
  ASSERT_TRUE(sut);
  caf::scoped_actor self{local().system()};
  // Act: a pulled message, then small ones; "count" must see all of them.
  self->send(*sut, make_bytes(16 << 20));
  for (int i = 0; i < 5; ++i)
    self->send(*sut, make_bytes(16));
  auto count = ask<uint64_t>(*sut, std::string{"count"});
  // Assert
  ASSERT_TRUE(count) << ferry::render(count.error());
  EXPECT_EQ(*count, 6u);
}

TEST_F(node_fixture, CompressedLinkCarriesFramesSmaller) {
  // Arrange
  auto& b = start_peer("B", {}, true);
  cfg.default_link.compression = ferry::compression::lz4;
  cfg.default_link.compression_threshold = 1024;
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  std::vector<std::byte> payload(1 << 20, std::byte{7}); // compresses well
  // Act
  auto hash = ask<uint64_t>(*sut, payload);
  // Assert
  ASSERT_TRUE(hash) << ferry::render(hash.error());
  EXPECT_EQ(*hash, fnv1a(payload));
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_LT(stats->bytes_inline_sent, uint64_t{64} << 10);
  // Credit is taken for what the receiver holds: the decompressed bytes.
  EXPECT_GE(stats->peak_in_flight_bytes, uint64_t{1} << 20);
}

TEST_F(node_fixture, SharedArrayOnSameHostArrivesAsTheSameObject) {
  // Arrange
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  std::vector<double> values(1 << 16);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>(i);
  auto array = ferry::store::make_shared_array<double>(*local().store(),
                                                       values);
  ASSERT_TRUE(array) << ferry::render(array.error());
  // Act
  auto answer = ask<std::string>(*sut, *array);
  // Assert: the receiver read the very object we created (no copy).
  ASSERT_TRUE(answer) << ferry::render(answer.error());
  auto id = std::to_string(static_cast<uint64_t>(array->ref().id()));
  EXPECT_EQ(answer->substr(0, answer->find(' ')), id) << *answer;
  EXPECT_NE(answer->find(std::to_string(
              static_cast<double>(values.size() * (values.size() - 1) / 2))),
            std::string::npos)
    << *answer;
}

TEST_F(node_fixture, RefusalsReachTheLogAtMostOnceASecondAndAllAreCounted) {
  // Arrange: a type only this node registers makes B refuse every one-way
  // message of it; this node's log goes to a sink the test reads.
  cfg.add_message_type<std::vector<uint16_t>>("test.only_here");
  // Shared with the sink: the node may still log after the test's body.
  struct log_lines {
    std::mutex mtx;
    std::vector<std::string> lines;
  };
  auto log = std::make_shared<log_lines>();
  cfg.log_sink = [log](const std::string& line) {
    std::lock_guard<std::mutex> guard{log->mtx};
    log->lines.push_back(line);
  };
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  caf::scoped_actor self{local().system()};
  auto refused_by_b = [&] {
    auto stats = local().stats("B");
    return stats ? stats->refused_by_peer : 0;
  };
  auto await_refusals = [&](uint64_t n) {
    for (int i = 0; i < 500 && refused_by_b() < n; ++i)
      std::this_thread::sleep_for(10ms);
  };
  // Act: 100 refused messages at once; after a pause, one more.
  auto started = std::chrono::steady_clock::now();
  for (uint16_t i = 0; i < 100; ++i)
    self->send(*sut, std::vector<uint16_t>{i});
  await_refusals(100);
  auto burst = std::chrono::steady_clock::now() - started;
  std::this_thread::sleep_for(1100ms);
  self->send(*sut, std::vector<uint16_t>{100});
  await_refusals(101);
  // Assert: one line per second of the burst at most, and every refusal
  // in a line of its own or in the count of a later one.
  std::vector<std::string> refusals;
  {
    std::lock_guard<std::mutex> guard{log->mtx};
    for (auto& line : log->lines)
      if (line.find("node B refused a message") != std::string::npos)
        refusals.push_back(line);
  }
  EXPECT_EQ(refused_by_b(), 101u);
  ASSERT_GE(refusals.size(), 2u);
  auto burst_seconds
    = std::chrono::duration_cast<std::chrono::seconds>(burst).count();
  EXPECT_LE(refusals.size(), static_cast<size_t>(2 + burst_seconds));
  uint64_t accounted = 0;
  for (auto& line : refusals) {
    EXPECT_EQ(line.rfind("ferry[local]: ", 0), 0u) << line;
    EXPECT_NE(line.find("test.only_here"), std::string::npos) << line;
    accounted += 1;
    auto more = line.find("(and ");
    if (more != std::string::npos)
      accounted += std::stoull(line.substr(more + 5));
  }
  EXPECT_EQ(accounted, 101u);
}

TEST_F(node_fixture, HandleInAMessageRefusedBeforeDecodingIsReleased) {
  // Arrange: a type only this node registers makes B refuse the message at
  // its first element, before it decodes (and redeems) the handle behind
  // it. A window of 4 messages makes B return credit after every message.
  cfg.add_message_type<std::vector<uint16_t>>("test.only_here");
  cfg.default_link.window_messages = 4;
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  auto array = ferry::store::make_shared_array<double>(
    *local().store(), std::vector<double>(1024, 1.0));
  ASSERT_TRUE(array) << ferry::render(array.error());
  // Act
  auto refused = ask<std::string>(*sut, std::vector<uint16_t>{1, 2, 3},
                                  *array);
  auto after = ask<std::string>(*sut, std::string{"abc"});
  // Assert: the refusal names the type; once B's credit for the refused
  // message is back, only our own handle holds the object.
  ASSERT_FALSE(refused);
  EXPECT_NE(ferry::render(refused.error()).find("test.only_here"),
            std::string::npos)
    << ferry::render(refused.error());
  ASSERT_TRUE(after) << ferry::render(after.error());
  for (int i = 0; i < 500 && array->ref().ref_count() != 1; ++i)
    std::this_thread::sleep_for(20ms);
  EXPECT_EQ(array->ref().ref_count(), 1u);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->tickets_in_transit, 0u);
}

TEST_F(node_fixture, ResponseThisNodeCannotDecodeFailsTheRequestAtOnce) {
  // Arrange: this node decodes at most 4 KiB; B answers with 100,000 bytes.
  cfg.default_link.max_message_size = 4096;
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  // Act
  auto reply = ask_within<std::vector<std::byte>>(10s, *sut, uint64_t{100000},
                                                  int32_t{7});
  // Assert: the decoding error, not the request's timeout.
  ASSERT_FALSE(reply);
  EXPECT_NE(reply.error(), caf::make_error(caf::sec::request_timeout))
    << ferry::render(reply.error());
  EXPECT_EQ(reply.error(), caf::make_error(ferry::errc::message_too_large,
                                          reply.error().context()));
  EXPECT_NE(ferry::render(reply.error())
              .find("above node local's max-message-size of 4096 bytes"),
            std::string::npos)
    << ferry::render(reply.error());
}

class handle_across_hosts : public node_fixture,
                            public ::testing::WithParamInterface<size_t> {};

TEST_P(handle_across_hosts, SharedArrayArrivesAsACopyInTheReceiversStore) {
  // Arrange: B has a store of its own (another host, as far as ferry knows).
  auto& b = start_peer("B", {}, true);
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  std::vector<double> values(GetParam());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>(i);
  auto array = ferry::store::make_shared_array<double>(*local().store(),
                                                       values);
  ASSERT_TRUE(array) << ferry::render(array.error());
  auto bytes = values.size() * sizeof(double);
  // Act
  auto answer = ask<std::string>(*sut, *array);
  // Assert: B read all elements from an object of its own store.
  ASSERT_TRUE(answer) << ferry::render(answer.error());
  EXPECT_NE(answer->find(std::to_string(
              static_cast<double>(values.size() * (values.size() - 1) / 2))),
            std::string::npos)
    << *answer;
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  if (bytes >= cfg.default_link.pull_threshold) {
    EXPECT_EQ(stats->bytes_pulled_by_peer, bytes); // pulled in chunks
  } else {
    EXPECT_EQ(stats->bytes_pulled_by_peer, 0u); // went with the message
    EXPECT_GE(stats->bytes_inline_sent, bytes);
  }
  // B took the copy before it answered: only our handle is left.
  EXPECT_EQ(array->ref().ref_count(), 1u);
  EXPECT_EQ(stats->tickets_in_transit, 0u);
}

// 512 KiB travels with the message, 12 MiB is above the 8 MiB pull threshold.
INSTANTIATE_TEST_SUITE_P(sizes, handle_across_hosts,
                         ::testing::Values(size_t{1} << 16,
                                           size_t{3} << 19));

TEST_F(node_fixture, SameObjectTwiceToAnotherHostIsCopiedOnce) {
  // Arrange
  auto& b = start_peer("B", {}, true);
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  std::vector<double> values(4096, 0.5);
  auto array = ferry::store::make_shared_array<double>(*local().store(),
                                                       values);
  ASSERT_TRUE(array) << ferry::render(array.error());
  ferry::test::array_pair pair{*array, *array};
  // Act: B answers whether both handles name one object and their sums.
  auto answer = ask<std::string>(*sut, pair);
  // Assert
  ASSERT_TRUE(answer) << ferry::render(answer.error());
  EXPECT_EQ(*answer, "same 2048 2048");
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_LT(stats->bytes_inline_sent, 2 * values.size() * sizeof(double));
  // Ours and the pair's two: nothing is left in transit.
  EXPECT_EQ(array->ref().ref_count(), 3u);
}

TEST_F(node_fixture, StoreHandleToANodeWithoutStoreFailsWithAClearError) {
  // Arrange
  auto& b = start_peer("B", {"--ferry.store.disabled"}, true);
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  std::vector<double> values(16, 1.0);
  auto array = ferry::store::make_shared_array<double>(*local().store(),
                                                       values);
  ASSERT_TRUE(array);
  // Act
  auto answer = ask<std::string>(*sut, *array);
  // Assert: the request fails naming the cause; the sender's object is
  // released (only our handle is left) and B keeps running.
  ASSERT_FALSE(answer);
  auto text = ferry::render(answer.error());
  EXPECT_NE(text.find("has no store"), std::string::npos) << text;
  EXPECT_EQ(array->ref().ref_count(), 1u);
  auto echo = ask<std::string>(*sut, std::string{"abc"});
  ASSERT_TRUE(echo) << ferry::render(echo.error());
  EXPECT_EQ(*echo, "cba");
}

TEST_F(node_fixture, CreditBelowOneBatchIsReturnedOnceTheReceiverIsIdle) {
  // Arrange: a 1 MiB window; the receiver returns credit in batches of a
  // quarter window, so 200 KiB alone is below one batch.
  auto& b = start_peer("B", {}, true);
  cfg.default_link.window_bytes = uint64_t{1} << 20;
  cfg.default_link.send_timeout = std::chrono::milliseconds{10000};
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  auto first = make_bytes(200 << 10);
  auto second = make_bytes(900 << 10); // fits only once the first is returned
  // Act
  auto hash1 = ask<uint64_t>(*sut, first);
  auto hash2 = ask<uint64_t>(*sut, second);
  // Assert
  ASSERT_TRUE(hash1) << ferry::render(hash1.error());
  ASSERT_TRUE(hash2) << ferry::render(hash2.error());
  EXPECT_EQ(*hash2, fnv1a(second));
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->send_errors, 0u);
}

TEST_F(node_fixture, ReceiverReturnsCreditInBatchesNotPerMessage) {
  // Arrange: 400 messages per window, so credit returns per 100 messages;
  // 300 one-way messages never fill the window.
  auto& b = start_peer("B");
  cfg.default_link.window_messages = 400;
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  caf::scoped_actor self{local().system()};
  // Act
  for (int32_t i = 0; i < 300; ++i)
    self->send(*sut, i);
  auto text = ask<std::string>(*sut, std::string{"done"}); // after the 300
  // Assert
  ASSERT_TRUE(text) << ferry::render(text.error());
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->credit_waits, 0u);
  EXPECT_GE(stats->credits_received, 2u);
  EXPECT_LE(stats->credits_received, 4u);
}

TEST_F(node_fixture, SenderForgetsStoreTicketsTheReceiverTook) {
  // Arrange: 256 KiB frames spill into the store (the wire message carries
  // a ticket of a few bytes); a 16-message window returns credit, and the
  // count of messages taken, every 4 messages.
  auto& b = start_peer("B");
  cfg.default_link.window_messages = 16;
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  auto payload = make_bytes(256 << 10);
  caf::scoped_actor self{local().system()};
  // Act
  for (int i = 0; i < 100; ++i)
    self->send(*sut, payload);
  auto hash = ask<uint64_t>(*sut, payload);
  // Assert
  ASSERT_TRUE(hash) << ferry::render(hash.error());
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_GE(stats->bytes_spilled_sent, uint64_t{101} * (256 << 10));
  EXPECT_LT(stats->tickets_in_transit, 20u)
    << "credits received: " << stats->credits_received
    << ", credit waits: " << stats->credit_waits;
}

TEST_F(node_fixture, AtomsAndMultiElementMessagesCrossTheLink) {
  // Arrange
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port, "adder-by-atom");
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  // Act
  auto sum = ask<int32_t>(*sut, caf::atom("add"), int32_t{20}, int32_t{22});
  // Assert
  ASSERT_TRUE(sum) << ferry::render(sum.error());
  EXPECT_EQ(*sum, 42);
}

TEST_F(node_fixture, NodeWithoutDefaultActorStillServesExposedOnes) {
  // Arrange
  auto& b = start_peer("B");
  cfg.store_enabled = false;
  auto port = local().publish(caf::actor{});
  // Act
  auto to_b = local().remote_actor("127.0.0.1", b.port);
  // Assert
  ASSERT_TRUE(port) << ferry::render(port.error());
  ASSERT_TRUE(to_b) << ferry::render(to_b.error());
}
