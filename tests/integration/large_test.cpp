// Multi-GiB payloads (label `large`: run by the README's test command, left
// out of the sanitizer runs, never in parallel with other tests).
#include "node_fixture.hpp"

#include <iostream>

using namespace ferry::test;

TEST_F(node_fixture, OneGiBOnSameHostTravelsThroughTheStore) {
  // Arrange
  store_bytes_ = uint64_t{3} << 29; // 1.5 GiB
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  auto payload = make_bytes(size_t{1} << 30);
  auto expected = fnv1a(payload);
  // Act
  auto hash = ask_within<uint64_t>(120s, *sut, std::move(payload));
  // Assert
  ASSERT_TRUE(hash) << ferry::render(hash.error());
  EXPECT_EQ(*hash, expected);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->bytes_spilled_sent, uint64_t{1} << 30);
}

TEST_F(node_fixture, OneGiBAcrossHostsIsPulledInChunks) {
  // Arrange
  auto& b = start_peer("B", {}, true);
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  auto payload = make_bytes(size_t{1} << 30);
  auto expected = fnv1a(payload);
  // Act
  auto hash = ask_within<uint64_t>(120s, *sut, std::move(payload));
  // Assert
  ASSERT_TRUE(hash) << ferry::render(hash.error());
  EXPECT_EQ(*hash, expected);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->bytes_pulled_by_peer, uint64_t{1} << 30);
}

TEST_F(node_fixture, FiveGiBPastThirtyTwoBitLengthsArrivesWhole) {
  // Arrange: more than a 32-bit length can say; ferry pulls it in chunks.
  auto& b = start_peer("B", {}, true);
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  auto payload = make_bytes(size_t{5} << 30);
  auto expected = fnv1a(payload);
  auto start = std::chrono::steady_clock::now();
  // Act
  auto hash = ask_within<uint64_t>(300s, *sut, std::move(payload));
  std::cout << "5 GiB round trip: "
            << std::chrono::duration<double>(std::chrono::steady_clock::now()
                                             - start)
                 .count()
            << " s\n";
  // Assert
  ASSERT_TRUE(hash) << ferry::render(hash.error());
  EXPECT_EQ(*hash, expected);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->bytes_pulled_by_peer, uint64_t{5} << 30);
}

TEST_F(node_fixture, PayloadAboveMaxMessageSizeIsRefusedBeforeSending) {
  // Arrange
  auto& b = start_peer("B", {}, true);
  cfg.default_link.max_message_size = uint64_t{1} << 30;
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  auto payload = make_bytes((size_t{1} << 30) + 1);
  // Act
  auto hash = ask<uint64_t>(*sut, payload);
  // Assert
  ASSERT_FALSE(hash);
  EXPECT_EQ(hash.error(), caf::make_error(ferry::errc::message_too_large,
                                          hash.error().context()));
  EXPECT_NE(ferry::render(hash.error()).find("max-message-size"),
            std::string::npos);
}
