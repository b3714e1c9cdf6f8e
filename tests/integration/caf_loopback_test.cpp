// An end-to-end check that the pieces meet: two real processes, each
// with a CAF actor system and middleman, exchange a message over loopback
// through CAF's publish / remote_actor.
#include "ferry/errc.hpp"
#include "ferry/test/child_process.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

using namespace std::chrono_literals;

namespace {

struct loopback_fixture : testing::Test {
  loopback_fixture() {
    cfg.load<caf::io::middleman>();
  }
  caf::actor_system_config cfg;
};

} // namespace

TEST_F(loopback_fixture, RemoteActorAnswersRequestFromOtherProcess) {
  // Arrange
  ferry::test::child_process peer{FERRY_ECHO_PEER, {}};
  auto port_text = peer.wait_for("port ");
  ASSERT_TRUE(port_text) << "peer did not report its port";
  auto port = static_cast<uint16_t>(std::stoi(*port_text));
  caf::actor_system sys{cfg};
  auto sut = sys.middleman().remote_actor("127.0.0.1", port);
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  // Act
  caf::scoped_actor self{sys};
  std::string reply;
  caf::error failure;
  self->request(*sut, 10s, std::string{"ferry"})
    .receive([&](const std::string& x) { reply = x; },
             [&](caf::error& err) { failure = std::move(err); });
  // Assert
  EXPECT_FALSE(failure) << ferry::render(failure);
  EXPECT_EQ(reply, "yrref");
  peer.close_stdin();
  auto status = peer.wait();
  EXPECT_TRUE(status.ok()) << ferry::test::to_string(status);
}

TEST_F(loopback_fixture, RemoteActorOnClosedPortFailsWithError) {
  // Arrange: a peer that publishes, then exits, leaving its port closed.
  uint16_t port = 0;
  {
    ferry::test::child_process peer{FERRY_ECHO_PEER, {}};
    auto port_text = peer.wait_for("port ");
    ASSERT_TRUE(port_text);
    port = static_cast<uint16_t>(std::stoi(*port_text));
    peer.close_stdin();
    ASSERT_TRUE(peer.wait().ok());
  }
  caf::actor_system sys{cfg};
  // Act
  auto sut = sys.middleman().remote_actor("127.0.0.1", port);
  // Assert
  ASSERT_FALSE(sut);
  EXPECT_FALSE(ferry::render(sut.error()).empty());
}
