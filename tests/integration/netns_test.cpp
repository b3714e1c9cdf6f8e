// Two nodes in really separate network stacks: the peer runs in a network
// namespace of the test's own, reached over a veth pair. The test runs as
// root of the machine or again inside a user namespace of its own, and is
// skipped (failed with FERRY_REQUIRE_PRIVILEGED_TESTS=1) where neither works
// (ferry/test/namespaces.hpp).
#include "netns_fixture.hpp"

#include <cstdlib>

using namespace ferry::test;

TEST_F(netns_fixture, NodesInSeparateNetworkStacksTalkAcrossTheVethPair) {
  // Arrange
  FERRY_RUN_WITH_NETWORK_NAMESPACES();
  if (auto reason = set_up(); !reason.empty())
    FERRY_SKIP_OR_FAIL(reason);
  setenv("FERRY_TEST_PUBLISH_ADDRESS", peer_address_.c_str(), 1);
  child_process peer{ip_tool(),
                     {"netns", "exec", ns_, FERRY_TEST_NODE,
                      "--ferry.node-name=far", "--ferry.host-id=far-host",
                      "--ferry.store.name=" + store_name_ + "-far"}};
  unsetenv("FERRY_TEST_PUBLISH_ADDRESS");
  auto port = peer.wait_for("port ");
  ASSERT_TRUE(port) << "peer in the namespace did not start";
  auto sut = local().remote_actor(peer_address_,
                                  static_cast<uint16_t>(std::stoi(*port)));
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  auto payload = make_bytes(12 << 20); // pulled in chunks across the veth
  // Act
  auto text = ask<std::string>(*sut, std::string{"netns"});
  auto hash = ask<uint64_t>(*sut, payload);
  // Assert
  ASSERT_TRUE(text) << ferry::render(text.error());
  EXPECT_EQ(*text, "snten");
  ASSERT_TRUE(hash) << ferry::render(hash.error());
  EXPECT_EQ(*hash, fnv1a(payload));
  auto stats = local().stats("far");
  ASSERT_TRUE(stats);
  EXPECT_FALSE(stats->same_host);
  EXPECT_EQ(stats->bytes_pulled_by_peer, uint64_t{12} << 20);
  peer.close_stdin();
  EXPECT_TRUE(peer.wait(10s).ok());
}
