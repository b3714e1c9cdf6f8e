// Unit tests of the store's segregated-fit allocator (private).
#include "allocator.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>

using namespace ferry::store::detail;

namespace {

class allocator_test : public ::testing::Test {
protected:
  static constexpr uint64_t capacity = uint64_t{1} << 20;

  allocator_test()
    : state(std::make_unique<allocator_state>()),
      memory(std::make_unique<std::byte[]>(capacity + 64)),
      data(memory.get() + (64 - reinterpret_cast<uintptr_t>(memory.get()) % 64)),
      sut(*state, data) {
    sut.init(capacity);
  }

  std::unique_ptr<allocator_state> state;
  std::unique_ptr<std::byte[]> memory;
  std::byte* data;
  allocator sut;
};

TEST_F(allocator_test, FreshRegionIsOneFreeBlock) {
  EXPECT_EQ(sut.largest_free_payload(), capacity - block_header_size);
  EXPECT_EQ(state->used, 0u);
}

TEST_F(allocator_test, FreedBlockIsReusedByTheNextFit) {
  auto [a, a_size] = sut.allocate(4096);
  ASSERT_NE(a, npos64);
  EXPECT_EQ(a_size, 4096u + 64u);
  auto b = sut.allocate(100).first;
  ASSERT_NE(b, npos64);
  sut.deallocate(a);
  auto c = sut.allocate(4000).first;
  EXPECT_EQ(c, a);
}

TEST_F(allocator_test, NeighboursCoalesceBackIntoOneBlock) {
  auto a = sut.allocate(1000).first;
  auto b = sut.allocate(2000).first;
  auto c = sut.allocate(3000).first;
  sut.deallocate(a);
  sut.deallocate(c);
  sut.deallocate(b);
  EXPECT_EQ(state->used, 0u);
  EXPECT_EQ(sut.largest_free_payload(), capacity - block_header_size);
}

TEST_F(allocator_test, WholeCapacityCanBeAllocatedOnce) {
  auto [a, size] = sut.allocate(capacity - block_header_size);
  ASSERT_NE(a, npos64);
  EXPECT_EQ(size, capacity);
  EXPECT_EQ(sut.allocate(0).first, npos64);
  sut.deallocate(a);
  EXPECT_NE(sut.allocate(capacity - block_header_size).first, npos64);
}

TEST_F(allocator_test, TooLargeRequestsFail) {
  EXPECT_EQ(sut.allocate(capacity).first, npos64);
  EXPECT_EQ(sut.allocate(~uint64_t{0} - 10).first, npos64);
}

TEST_F(allocator_test, BlockSizeOfHugePayloadsSaturatesInsteadOfWrapping) {
  // Arrange
  constexpr auto largest = ~(block_align - 1);
  // Act
  auto near_max = allocator::block_size_for(~uint64_t{0} - 10);
  auto at_max = allocator::block_size_for(~uint64_t{0});
  auto last_exact = allocator::block_size_for(largest - block_header_size);
  // Assert: never smaller than the payload (it used to wrap to 128 bytes).
  EXPECT_EQ(near_max, largest);
  EXPECT_EQ(at_max, largest);
  EXPECT_EQ(last_exact, largest);
  EXPECT_EQ(allocator::block_size_for(4096), 4096u + block_header_size);
}

TEST_F(allocator_test, RandomWorkloadKeepsBlocksDisjointAndRebuildAgrees) {
  std::mt19937 gen{42};
  std::map<uint64_t, uint64_t> live; // offset -> block size
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || gen() % 3 != 0) {
      auto payload = gen() % 20000;
      auto [offset, size] = sut.allocate(payload);
      if (offset == npos64)
        continue;
      ASSERT_GE(size, payload + block_header_size);
      ASSERT_LE(offset + size, capacity);
      auto next = live.lower_bound(offset);
      if (next != live.end()) {
        ASSERT_LE(offset + size, next->first);
      }
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second, offset);
      }
      live.emplace(offset, size);
    } else {
      auto it = live.begin();
      std::advance(it, gen() % live.size());
      sut.deallocate(it->first);
      live.erase(it);
    }
    uint64_t sum = 0;
    for (auto& [offset, size] : live)
      sum += size;
    ASSERT_EQ(state->used, sum);
  }
  // A rebuild from the live blocks yields a working allocator.
  std::vector<std::pair<uint64_t, uint64_t>> used(live.begin(), live.end());
  sut.rebuild(used);
  uint64_t sum = 0;
  for (auto& [offset, size] : live)
    sum += size;
  EXPECT_EQ(state->used, sum);
  for (auto& [offset, size] : live)
    sut.deallocate(offset);
  EXPECT_EQ(state->used, 0u);
  EXPECT_EQ(sut.largest_free_payload(), capacity - block_header_size);
}

} // namespace
