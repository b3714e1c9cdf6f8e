// object_store::totals: the store's figures without its objects, as a
// node's metrics sample them every second. They must say what the full
// memory summary says of the same moment.
#include "ferry/store/object_store.hpp"

#include "spill_fixture.hpp"
#include "store_test_support.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

using namespace ferry::store;
using namespace ferry::store::test;

namespace {

/// Expects `totals` to say what `summary` says.
void expect_same(const store_totals& totals, const memory_summary& summary) {
  EXPECT_EQ(totals.name, summary.name);
  EXPECT_EQ(totals.capacity, summary.capacity);
  EXPECT_EQ(totals.bytes_used, summary.bytes_used);
  EXPECT_EQ(totals.bytes_pinned, summary.bytes_pinned);
  EXPECT_EQ(totals.bytes_spilled, summary.bytes_spilled);
  EXPECT_EQ(totals.spill_limit, summary.spill_limit);
  EXPECT_EQ(totals.largest_free_block, summary.largest_free_block);
  EXPECT_EQ(totals.recoveries, summary.recoveries);
  EXPECT_EQ(totals.objects, summary.objects.size());
  EXPECT_EQ(totals.processes, summary.processes.size());
  uint64_t alive = 0;
  for (auto& p : summary.processes)
    alive += p.alive ? 1 : 0;
  EXPECT_EQ(totals.processes_alive, alive);
}

TEST(store_totals, AnEmptyStoreHasNoObjectsAndOneLiveProcess) {
  store_cleanup cleanup{small_config("totals-empty")};
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(sut) << render(sut.error());
  auto totals = sut->totals();
  ASSERT_TRUE(totals) << render(totals.error());
  EXPECT_EQ(totals->name, cleanup.cfg.name);
  EXPECT_EQ(totals->capacity, cleanup.cfg.capacity);
  EXPECT_EQ(totals->objects, 0u);
  EXPECT_EQ(totals->bytes_used, 0u);
  EXPECT_EQ(totals->processes, 1u);
  EXPECT_EQ(totals->processes_alive, 1u);
}

TEST(store_totals, SealedHeldAndUnsealedObjectsCountAsTheSummarySaysThem) {
  store_cleanup cleanup{small_config("totals")};
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(sut) << render(sut.error());
  auto a = sut->put(pattern(1000, 1));
  auto b = sut->put(pattern(3000, 2));
  ASSERT_TRUE(a && b);
  auto builder = sut->create(10);
  ASSERT_TRUE(builder);
  auto totals = sut->totals();
  auto summary = sut->memory_summary();
  ASSERT_TRUE(totals && summary);
  EXPECT_EQ(totals->objects, 3u);
  EXPECT_GT(totals->bytes_pinned, 0u);
  expect_same(*totals, *summary);
  // Dropping a handle frees its object: the totals follow.
  a->reset();
  totals = sut->totals();
  summary = sut->memory_summary();
  ASSERT_TRUE(totals && summary);
  EXPECT_EQ(totals->objects, 2u);
  expect_same(*totals, *summary);
}

TEST_F(spill_test, TotalsCountSpilledObjectsAndTheirBytes) {
  ASSERT_NE(put_in_transit(1).id, 0u);
  ASSERT_NE(put_in_transit(2).id, 0u); // spills the first
  auto totals = sut.totals();
  ASSERT_TRUE(totals) << render(totals.error());
  EXPECT_EQ(totals->objects, 2u);
  EXPECT_GT(totals->bytes_spilled, 0u);
  expect_same(*totals, summary());
}

TEST(store_totals, ADetachedHandleFailsWithInvalidHandle) {
  store_cleanup cleanup{small_config("totals-detached")};
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(sut);
  auto moved = std::move(*sut);
  moved.detach();
  auto totals = moved.totals();
  ASSERT_FALSE(totals);
  EXPECT_EQ(code_of(totals.error()), errc::invalid_handle);
}

} // namespace
