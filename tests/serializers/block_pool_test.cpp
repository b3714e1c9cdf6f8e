// block_pool and make_pooled_message: freed blocks are reused up to the
// pool's capacity, other sizes pass through, and a pooled message is a CAF
// message like any other.

#include "ferry/serializers/detail/block_pool.hpp"
#include "ferry/serializers/detail/pooled_message.hpp"

#include <caf/atom.hpp>
#include <caf/message.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace ferry::serializers::detail {
namespace {

// Sizes of their own, so no other test shares these pools.
using small_pool = block_pool<72, 2>;
using thread_pool = block_pool<88, 64>;

TEST(block_pool, AGivenBlockIsTakenAgain) {
  // Arrange
  auto* first = small_pool::take(72);
  // Act
  small_pool::give(first, 72);
  auto* again = small_pool::take(72);
  // Assert
  EXPECT_EQ(again, first);
  small_pool::give(again, 72);
}

TEST(block_pool, KeepsAtMostItsCapacity) {
  // Arrange: three blocks out, a pool that keeps two.
  auto* a = small_pool::take(72);
  auto* b = small_pool::take(72);
  auto* c = small_pool::take(72);
  // Act: the third goes back to operator delete.
  small_pool::give(a, 72);
  small_pool::give(b, 72);
  small_pool::give(c, 72);
  std::set<void*> kept{small_pool::take(72), small_pool::take(72)};
  auto* fresh = small_pool::take(72);
  // Assert: the two kept ones come back, then a new block.
  EXPECT_EQ(kept, (std::set<void*>{a, b}));
  EXPECT_EQ(kept.count(fresh), 0u);
  for (auto* x : kept)
    small_pool::give(x, 72);
  small_pool::give(fresh, 72);
}

TEST(block_pool, OtherSizesPassThrough) {
  // Arrange: a pooled block waits in the list.
  auto* pooled = small_pool::take(72);
  small_pool::give(pooled, 72);
  // Act: a request of another size must not get it.
  auto* other = small_pool::take(256);
  // Assert
  EXPECT_NE(other, pooled);
  small_pool::give(other, 256);
  EXPECT_EQ(small_pool::take(72), pooled);
  small_pool::give(pooled, 72);
}

TEST(block_pool, BlocksMadeOnOneThreadAreFreedOnAnother) {
  // Arrange: blocks taken here, given back by another thread (as a message
  // made by a decoding thread and freed by the receiving actor's thread).
  std::vector<void*> blocks;
  for (int i = 0; i < 64; ++i)
    blocks.push_back(thread_pool::take(88));
  // Act
  std::thread other{[&] {
    for (auto* x : blocks)
      thread_pool::give(x, 88);
  }};
  other.join();
  std::set<void*> again;
  for (int i = 0; i < 64; ++i)
    again.insert(thread_pool::take(88));
  // Assert: every block came back through the list.
  EXPECT_EQ(again, std::set<void*>(blocks.begin(), blocks.end()));
  for (auto* x : again)
    thread_pool::give(x, 88);
}

TEST(pooled_message, MatchesAndCopiesLikeCafsOwn) {
  // Arrange
  auto sut = make_pooled_message(std::string{"abc"}, int32_t{7});
  // Act: a copy CAF makes on write is a plain message of the same content.
  auto copy = sut;
  copy.get_mutable_as<int32_t>(1) = 8;
  // Assert
  ASSERT_TRUE((sut.match_elements<std::string, int32_t>()));
  EXPECT_EQ(sut.get_as<std::string>(0), "abc");
  EXPECT_EQ(sut.get_as<int32_t>(1), 7);
  EXPECT_EQ(copy.get_as<int32_t>(1), 8);
  EXPECT_EQ(sut.type_token(), caf::make_message(std::string{}, int32_t{0})
                                .type_token());
}

TEST(pooled_message, ItsBlockGoesBackToThePoolWithTheLastReference) {
  // Arrange: the address of one message's content.
  const void* first = nullptr;
  {
    auto msg = make_pooled_message(uint64_t{1}, uint64_t{2}, uint64_t{3});
    first = msg.cvals().get();
  }
  // Act: the next message of the same types.
  auto again = make_pooled_message(uint64_t{4}, uint64_t{5}, uint64_t{6});
  // Assert: it got the freed block.
  EXPECT_EQ(again.cvals().get(), first);
  EXPECT_EQ(again.get_as<uint64_t>(2), 6u);
}

} // namespace
} // namespace ferry::serializers::detail
