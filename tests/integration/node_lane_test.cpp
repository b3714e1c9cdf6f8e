// Same-host lanes between a local node and peer processes: links of one
// host send through shared-memory rings both ways, in order, through rings
// far smaller than what crosses them; either node can turn lanes off; no
// ring name outlives the handshake; a peer that dies or shuts down takes
// the link down instead of leaving a reader waiting.
//
// Each test runs a local node in the test process and starts peers
// (ferry_test_node) as child processes (node_fixture.hpp).
#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include "ferry/test/eventually.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <string>
#include <thread>

#include "node_fixture.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

/// Returns the names in /dev/shm of lane rings made by process `pid`.
std::vector<std::string> lane_rings_of(pid_t pid) {
  std::vector<std::string> result;
  auto prefix = "ferry-lane-" + std::to_string(pid) + "-";
  for (auto& entry : std::filesystem::directory_iterator{"/dev/shm"}) {
    auto name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0)
      result.push_back(name);
  }
  return result;
}

/// Waits up to 10 s until `sut` holds no link to `peer`.
bool link_gone(const ferry::node& sut, const std::string& peer) {
  return ferry::test::eventually([&] { return !sut.stats(peer); }, 10s);
}

/// node_fixture, and a link to a peer's echo checked with one message.
class lane_fixture : public node_fixture {
protected:
  /// Links to `b`'s echo, sends it `n` bytes and checks the hash it
  /// answers; returns the echo's proxy.
  caf::expected<caf::actor> echo_through(peer& b, size_t n) {
    auto sut = local().remote_actor("127.0.0.1", b.port);
    if (!sut)
      return sut;
    auto payload = make_bytes(n);
    auto hash = ask<uint64_t>(*sut, payload);
    if (!hash)
      return std::move(hash.error());
    EXPECT_EQ(*hash, fnv1a(payload));
    return sut;
  }
};

} // namespace

TEST_F(lane_fixture, LinkOnOneHostSendsThroughALaneBothWays) {
  // Arrange
  auto& b = start_peer("B");
  // Act
  auto sut = echo_through(b, 1000);
  // Assert
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_TRUE(stats->same_host);
  EXPECT_TRUE(stats->lane);
  EXPECT_EQ(stats->send_errors, 0u);
  auto peer_side = b.stats()[cfg.node_name];
  EXPECT_NE(peer_side.find(" lane=1"), std::string::npos) << peer_side;
  // Each ring's name went once its writer held it open.
  EXPECT_TRUE(lane_rings_of(::getpid()).empty());
  EXPECT_TRUE(lane_rings_of(b.process->pid()).empty());
}

TEST_F(lane_fixture, TwentyThousandMessagesKeepTheirOrderThroughSmallRings) {
  // Arrange: 64 KiB rings both ways; 20,000 messages in a burst are many
  // times what a ring holds, so senders wait for room again and again.
  auto& b = start_peer("B", {"--ferry.link.lane-bytes=64KiB"});
  cfg.default_link.lane_bytes = 64 << 10;
  auto sut = local().remote_actor("127.0.0.1", b.port, "sequence");
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  caf::scoped_actor self{local().system()};
  // Act
  for (int64_t i = 0; i < 20000; ++i)
    self->send(*sut, i);
  auto answer = ask<std::string>(*sut, std::string{"report"});
  // Assert
  ASSERT_TRUE(answer) << ferry::render(answer.error());
  EXPECT_EQ(*answer, "20000 20000");
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_TRUE(stats->lane);
  EXPECT_EQ(stats->send_errors, 0u);
}

TEST_F(lane_fixture, MessagesLargerThanTheRingStreamThroughItBothWays) {
  // Arrange: frames stay inline (spill threshold above them) and both
  // rings are 64 KiB; 4 MiB go each way.
  auto& b = start_peer("B", {"--ferry.link.lane-bytes=64KiB",
                             "--ferry.link.spill-threshold=64MiB"});
  cfg.default_link.lane_bytes = 64 << 10;
  cfg.default_link.spill_threshold = uint64_t{64} << 20;
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  auto payload = make_bytes(4 << 20);
  // Act
  auto hash = ask<uint64_t>(*sut, payload);
  auto back = ask<std::vector<std::byte>>(*sut, uint64_t{4} << 20, int32_t{7});
  // Assert
  ASSERT_TRUE(hash) << ferry::render(hash.error());
  EXPECT_EQ(*hash, fnv1a(payload));
  ASSERT_TRUE(back) << ferry::render(back.error());
  EXPECT_EQ(*back, std::vector<std::byte>(4 << 20, std::byte{7}));
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_TRUE(stats->lane);
  EXPECT_GE(stats->bytes_inline_sent, uint64_t{4} << 20);
  EXPECT_GE(stats->bytes_inline_received, uint64_t{4} << 20);
}

TEST_F(lane_fixture, LaneOffOnThePeerLinksThroughTheConnection) {
  // Arrange
  auto& b = start_peer("B", {"--ferry.link.no-lane"});
  // Act
  auto sut = echo_through(b, 100);
  // Assert
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_TRUE(stats->same_host);
  EXPECT_FALSE(stats->lane);
  EXPECT_NE(b.stats()[cfg.node_name].find(" lane=0"), std::string::npos);
  // The ring this node offered went with the handshake.
  EXPECT_TRUE(lane_rings_of(::getpid()).empty());
}

TEST_F(lane_fixture, LaneOffHereLinksThroughTheConnection) {
  // Arrange
  auto& b = start_peer("B");
  cfg.default_link.lane = false;
  // Act
  auto sut = echo_through(b, 100);
  // Assert
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_FALSE(stats->lane);
  EXPECT_NE(b.stats()[cfg.node_name].find(" lane=0"), std::string::npos);
}

TEST_F(lane_fixture, PeerKilledTakesTheLaneLinkDownAndRequestsFail) {
  // Arrange
  auto& b = start_peer("B");
  auto sut = echo_through(b, 10);
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  ASSERT_TRUE(local().stats("B")->lane);
  // Act
  b.process->kill(SIGKILL);
  b.process->wait(10s);
  // Assert
  EXPECT_TRUE(link_gone(local(), "B"));
  auto after = ask_within<uint64_t>(5s, *sut, make_bytes(10));
  EXPECT_FALSE(after);
  EXPECT_TRUE(lane_rings_of(::getpid()).empty());
}

TEST_F(lane_fixture, PeerShuttingDownClosesTheLaneAndTheLinkGoesDown) {
  // Arrange
  auto& b = start_peer("B");
  auto sut = echo_through(b, 10);
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  // Act: closing its input shuts the peer's node down.
  b.process->close_stdin();
  auto status = b.process->wait(20s);
  // Assert
  EXPECT_TRUE(link_gone(local(), "B"));
  EXPECT_TRUE(status.exited);
}
