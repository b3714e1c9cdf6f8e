// Large frames between a local node and a peer process: on the same host
// they travel through the shared store (cereal's byte arrays without a
// copy); across hosts (a store of its own) they travel inline, or are pulled
// in chunks above the pull threshold, keeping the order of the messages
// behind them; a large vector received lands in the memory of an earlier
// one (vector pool); a compressed link carries frames smaller.
//
// Each test runs a local node in the test process and starts peers
// (ferry_test_node) as child processes (node_fixture.hpp).
#include "node_fixture.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include "ferry/serializers/vector_pool.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using namespace ferry::test;

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
  auto sut = local().remote_actor("127.0.0.1", b.port, "counting");
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
