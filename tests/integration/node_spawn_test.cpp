// Spawning actors on a peer by type name (`node::remote_spawn`): a
// registered type starts and answers; spawned actors that end are forgotten
// by the link; `max-spawned-actors` refuses spawns beyond it (0: every one)
// naming the setting, until one ends; a constructor that throws and an
// unknown type are refused with an error that says why, and give their slot
// back.
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
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

/// Spawns an "adder" (answers base + x) on the node listening at `port`.
caf::expected<caf::actor> spawn_adder(ferry::node& from, uint16_t port,
                                      int32_t base) {
  return from.remote_spawn("127.0.0.1", port, "adder",
                           caf::make_message(base));
}

} // namespace

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
  ferry::test::eventually([&] {
    after = b.stats()["local"];
    return after.find(" spawned=0") != std::string::npos;
  });
  // Assert: B held them while they lived and let go once they ended (not
  // only once the link goes down).
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
  ferry::test::eventually([&] {
    after_one_ended = spawn_adder(local(), b.port, int32_t{3});
    return static_cast<bool>(after_one_ended);
  });
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
