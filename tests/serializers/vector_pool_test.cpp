// The vector pool: which vectors it keeps, reuse, limits, idle trimming, and
// decoded messages that give their vector back.

#include "test_types.hpp"

#include "ferry/serializers/detail/recycling_message.hpp"
#include "ferry/serializers/vector_pool.hpp"

#include <caf/message.hpp>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace ferry::serializers::test {
namespace {

using namespace std::chrono_literals;

constexpr size_t MiB = size_t{1} << 20;

/// Runs each test against an empty pool that keeps vectors from 1 MiB, at
/// most 16 MiB in all, idle for up to a minute; restores the defaults after.
class vector_pool : public ::testing::Test {
protected:
  vector_pool() {
    vector_pool_limits limits;
    limits.min_bytes = MiB;
    limits.max_bytes = 16 * MiB;
    limits.max_idle = 60s;
    set(limits);
  }

  ~vector_pool() override {
    set(vector_pool_limits{});
  }

  void set(const vector_pool_limits& limits) {
    vector_pool_config(limits);
    trim_vector_pool(true);
    base_ = vector_pool_stats();
  }

  /// Returns the pool's counters, those that only grow counted from the
  /// start of the test (the pool lives as long as the process).
  vector_pool_counters stats() const {
    auto result = vector_pool_stats();
    result.reused -= base_.reused;
    result.missed -= base_.missed;
    result.freed -= base_.freed;
    return result;
  }

  vector_pool_counters base_;

  /// Gives a vector of `bytes` capacity to the pool; returns its memory.
  static const std::byte* give(size_t bytes) {
    std::vector<std::byte> xs;
    xs.reserve(bytes);
    auto* data = xs.data();
    detail::give_vector(std::move(xs));
    return data;
  }

  /// Returns a raw-family payload of `n` bytes of `fill` encoded by `reg`,
  /// owning its frame.
  static payload owned_bytes(const registry& reg, size_t n, std::byte fill) {
    std::vector<std::byte> xs(n, fill);
    auto p = reg.encode(xs, encode_with("raw"));
    EXPECT_TRUE(p) << render(p.error());
    // The raw frame views `xs`: make it an owned copy.
    auto view = p->frames.back().bytes();
    p->frames.back() = frame{std::vector<std::byte>(view.begin(), view.end())};
    return std::move(*p);
  }
};

TEST_F(vector_pool, GivenVectorIsReusedByTheNextLargeTake) {
  // Arrange
  auto* memory = give(2 * MiB);
  // Act
  auto sut = detail::take_vector<std::byte>(2 * MiB - 100);
  // Assert
  EXPECT_EQ(sut.data(), memory);
  EXPECT_TRUE(sut.empty());
  EXPECT_GE(sut.capacity(), 2 * MiB);
  auto st = stats();
  EXPECT_EQ(st.reused, 1u);
  EXPECT_EQ(st.kept, 0u);
  EXPECT_EQ(st.kept_bytes, 0u);
}

TEST_F(vector_pool, VectorsBelowMinBytesAreNotKept) {
  give(MiB - 1);
  EXPECT_EQ(stats().kept, 0u);
  give(MiB);
  EXPECT_EQ(stats().kept, 1u);
}

TEST_F(vector_pool, SmallTakesNeitherReuseNorCount) {
  give(2 * MiB);
  auto sut = detail::take_vector<std::byte>(MiB - 1);
  EXPECT_EQ(sut.capacity(), 0u);
  auto st = stats();
  EXPECT_EQ(st.kept, 1u);
  EXPECT_EQ(st.reused + st.missed, 0u);
}

TEST_F(vector_pool, VectorMoreThanTwiceTheSizeIsNotHandedOut) {
  // Arrange: a small message must not take a block a large one needs.
  give(8 * MiB);
  // Act
  auto sut = detail::take_vector<std::byte>(4 * MiB - 1);
  // Assert
  EXPECT_EQ(sut.capacity(), 0u);
  auto st = stats();
  EXPECT_EQ(st.missed, 1u);
  EXPECT_EQ(st.kept, 1u);
  EXPECT_EQ(detail::take_vector<std::byte>(4 * MiB).capacity(), 8 * MiB);
}

TEST_F(vector_pool, SmallestFittingVectorIsTaken) {
  give(6 * MiB);
  auto* smaller = give(3 * MiB);
  give(4 * MiB);
  auto sut = detail::take_vector<std::byte>(2 * MiB);
  EXPECT_EQ(sut.data(), smaller);
}

TEST_F(vector_pool, AmongEqualFitsTheLastKeptIsTakenFirst) {
  // Arrange: three of one size, kept in this order.
  give(2 * MiB);
  auto* second = give(2 * MiB);
  auto* third = give(2 * MiB);
  // Act
  auto first_taken = detail::take_vector<std::byte>(2 * MiB);
  auto next_taken = detail::take_vector<std::byte>(2 * MiB);
  // Assert: last in, first out.
  EXPECT_EQ(first_taken.data(), third);
  EXPECT_EQ(next_taken.data(), second);
}

TEST_F(vector_pool, ElementTypesDoNotMix) {
  // Arrange
  std::vector<float> floats;
  floats.reserve(MiB); // 4 MiB
  detail::give_vector(std::move(floats));
  // Act
  auto bytes = detail::take_vector<std::byte>(4 * MiB);
  auto same = detail::take_vector<float>(MiB);
  // Assert
  EXPECT_EQ(bytes.capacity(), 0u);
  EXPECT_GE(same.capacity(), MiB);
}

TEST_F(vector_pool, OldestGoWhenMoreThanMaxBytesAreKept) {
  // Arrange
  give(6 * MiB);
  auto* second = give(6 * MiB);
  // Act: 18 MiB would exceed 16 MiB; the oldest goes.
  auto* third = give(6 * MiB);
  // Assert
  auto st = stats();
  EXPECT_EQ(st.kept, 2u);
  EXPECT_EQ(st.kept_bytes, 12 * MiB);
  EXPECT_EQ(st.freed, 1u);
  EXPECT_EQ(detail::take_vector<std::byte>(6 * MiB).data(), third);
  EXPECT_EQ(detail::take_vector<std::byte>(6 * MiB).data(), second);
}

TEST_F(vector_pool, VectorAboveMaxBytesIsNotKept) {
  give(17 * MiB);
  EXPECT_EQ(stats().kept, 0u);
}

TEST_F(vector_pool, IdleVectorsAreFreedByTrim) {
  // Arrange
  auto limits = vector_pool_config();
  limits.max_idle = 1ms;
  vector_pool_config(limits);
  give(2 * MiB);
  // Act: a trim as of 2 ms from now.
  detail::trim_vector_pool_at(std::chrono::steady_clock::now() + 2ms);
  // Assert
  auto st = stats();
  EXPECT_EQ(st.kept, 0u);
  EXPECT_EQ(st.freed, 1u);
}

TEST_F(vector_pool, TrimKeepsVectorsThatAreNotIdle) {
  give(2 * MiB);
  trim_vector_pool();
  EXPECT_EQ(stats().kept, 1u);
  trim_vector_pool(true);
  EXPECT_EQ(stats().kept, 0u);
}

TEST_F(vector_pool, LoweringMaxBytesFreesAtOnce) {
  give(6 * MiB);
  give(6 * MiB);
  auto limits = vector_pool_config();
  limits.max_bytes = 8 * MiB;
  vector_pool_config(limits);
  auto st = stats();
  EXPECT_EQ(st.kept, 1u);
  EXPECT_EQ(st.kept_bytes, 6 * MiB);
}

TEST_F(vector_pool, MaxBytesZeroTurnsThePoolOff) {
  // Arrange
  auto limits = vector_pool_config();
  limits.max_bytes = 0;
  vector_pool_config(limits);
  // Act
  give(2 * MiB);
  auto msg = detail::recycling_message(std::vector<std::byte>(2 * MiB));
  msg = caf::message{};
  // Assert
  EXPECT_EQ(stats().kept, 0u);
}

TEST_F(vector_pool, UnwrittenTakeKeepsTheElements) {
  // Arrange
  std::vector<std::byte> xs(2 * MiB, std::byte{0xab});
  detail::give_vector(std::move(xs));
  // Act
  auto sut = detail::take_vector_unwritten<std::byte>(MiB);
  // Assert: resizing down to what a caller needs writes nothing.
  ASSERT_EQ(sut.size(), 2 * MiB);
  sut.resize(MiB);
  EXPECT_TRUE(std::all_of(sut.begin(), sut.end(),
                          [](std::byte b) { return b == std::byte{0xab}; }));
}

TEST_F(vector_pool, DecodedMessageGivesItsVectorBackWhenItDies) {
  // Arrange
  registry sut;
  sut.add_type<std::vector<std::byte>>("bytes");
  auto p = owned_bytes(sut, 3 * MiB, std::byte{7});
  const std::byte* first_memory = nullptr;
  // Act: decode, read, drop; then decode another payload.
  {
    auto msg = sut.decode_message(p, decode_with("raw"));
    ASSERT_TRUE(msg) << render(msg.error());
    ASSERT_TRUE(msg->match_elements<std::vector<std::byte>>());
    first_memory = msg->get_as<std::vector<std::byte>>(0).data();
    EXPECT_EQ(stats().kept, 0u);
  }
  EXPECT_EQ(stats().kept, 1u);
  auto q = owned_bytes(sut, 3 * MiB - 5, std::byte{9});
  auto msg = sut.decode_message(q, decode_with("raw"));
  // Assert: the second reused the first one's memory, with its own bytes.
  ASSERT_TRUE(msg) << render(msg.error());
  auto& xs = msg->get_as<std::vector<std::byte>>(0);
  EXPECT_EQ(xs.data(), first_memory);
  ASSERT_EQ(xs.size(), 3 * MiB - 5);
  EXPECT_TRUE(std::all_of(xs.begin(), xs.end(),
                          [](std::byte b) { return b == std::byte{9}; }));
  EXPECT_EQ(stats().reused, 1u);
}

// Vectors from `min_bytes` up to 2 MiB (where decoders start advising
// huge pages) went to the pool when their message died but were never
// taken from it again: every decode of them took fresh memory.
TEST_F(vector_pool, DecodedVectorBelowTwoMiBReusesAKeptOne) {
  for (const auto* family : {"raw", "cereal.binary", "cereal.portable"}) {
    SCOPED_TRACE(family);
    // Arrange: an empty pool for each family.
    set(vector_pool_limits{MiB, 16 * MiB, 60s});
    registry sut;
    sut.add_type<std::vector<std::byte>>("bytes");
    std::vector<std::byte> first(MiB + 9, std::byte{5});
    std::vector<std::byte> second(MiB + 3, std::byte{6});
    auto p = sut.encode(first, encode_with(family));
    auto q = sut.encode(second, encode_with(family));
    ASSERT_TRUE(p && q);
    const std::byte* first_memory = nullptr;
    // Act: decode, drop, decode again.
    {
      auto msg = sut.decode_message(*p, decode_with(family));
      ASSERT_TRUE(msg) << render(msg.error());
      first_memory = msg->get_as<std::vector<std::byte>>(0).data();
    }
    auto msg = sut.decode_message(*q, decode_with(family));
    // Assert
    ASSERT_TRUE(msg) << render(msg.error());
    EXPECT_EQ(msg->get_as<std::vector<std::byte>>(0), second);
    EXPECT_EQ(msg->get_as<std::vector<std::byte>>(0).data(), first_memory);
    EXPECT_EQ(stats().reused, 1u);
  }
}

TEST_F(vector_pool, AdoptedFrameGoesBackWithItsMessage) {
  // Arrange
  registry sut;
  sut.add_type<std::vector<std::byte>>("bytes");
  auto p = owned_bytes(sut, 2 * MiB, std::byte{1});
  auto* frame_memory = p.frames.back().bytes().data();
  // Act
  auto msg = sut.decode_message(std::move(p), decode_with("raw"));
  ASSERT_TRUE(msg) << render(msg.error());
  EXPECT_EQ(msg->get_as<std::vector<std::byte>>(0).data(), frame_memory);
  *msg = caf::message{};
  // Assert
  EXPECT_EQ(detail::take_vector<std::byte>(2 * MiB).data(), frame_memory);
}

TEST_F(vector_pool, CopyOnWriteLeavesTheOriginalAlone) {
  // Arrange
  auto original = detail::recycling_message(
    std::vector<std::byte>(2 * MiB, std::byte{3}));
  auto sut = original;
  // Act: writing through a shared message copies it first.
  sut.get_mutable_as<std::vector<std::byte>>(0)[0] = std::byte{4};
  // Assert
  EXPECT_EQ(original.get_as<std::vector<std::byte>>(0)[0], std::byte{3});
  EXPECT_EQ(sut.get_as<std::vector<std::byte>>(0)[0], std::byte{4});
  EXPECT_EQ(sut.get_as<std::vector<std::byte>>(0).size(), 2 * MiB);
  original = caf::message{};
  sut = caf::message{};
  EXPECT_EQ(stats().kept, 2u);
}

TEST_F(vector_pool, VectorMovedOutOfItsMessageStaysWithItsNewOwner) {
  // Arrange
  auto msg = detail::recycling_message(std::vector<std::byte>(2 * MiB));
  // Act
  auto mine = std::move(msg.get_mutable_as<std::vector<std::byte>>(0));
  msg = caf::message{};
  // Assert
  EXPECT_EQ(mine.size(), 2 * MiB);
  EXPECT_EQ(stats().kept, 0u);
}

TEST_F(vector_pool, SmallDecodedVectorIsAPlainMessage) {
  registry sut;
  sut.add_type<std::vector<std::byte>>("bytes");
  auto p = owned_bytes(sut, 1000, std::byte{1});
  {
    auto msg = sut.decode_message(p, decode_with("raw"));
    ASSERT_TRUE(msg) << render(msg.error());
    EXPECT_EQ(msg->get_as<std::vector<std::byte>>(0).size(), 1000u);
  }
  EXPECT_EQ(stats().kept, 0u);
}

TEST_F(vector_pool, ConcurrentGivesAndTakesKeepTheCountsRight) {
  // Arrange
  constexpr int rounds = 200;
  std::vector<std::thread> threads;
  // Act: four threads take (reuse or allocate) and give back, at once.
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      for (int i = 0; i < rounds; ++i) {
        auto xs = detail::take_vector<std::byte>(MiB);
        if (xs.capacity() < MiB)
          xs.reserve(MiB);
        detail::give_vector(std::move(xs));
      }
    });
  for (auto& t : threads)
    t.join();
  // Assert: every take counted once, at most four vectors kept.
  auto st = stats();
  EXPECT_EQ(st.reused + st.missed, 4u * rounds);
  EXPECT_LE(st.kept, 4u);
  EXPECT_GE(st.kept, 1u);
  EXPECT_EQ(st.kept_bytes, st.kept * MiB);
}

} // namespace
} // namespace ferry::serializers::test
