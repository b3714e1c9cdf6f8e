// Shards' leases in both stores (entities/state_store, lease_rules): a
// free shard is granted, a held one refused naming its holder, a lease that
// ran out goes to the next owner with the next epoch, renewals extend only
// what an owner still holds, and a hand-off keeps a shard for one owner
// until its grace passes. Leases that must hold run for 30 s; those that
// must run out run for 200 ms, and the tests poll until they have.
#include "store_backends.hpp"

#include "ferry/test/eventually.hpp"

#include <algorithm>
#include <chrono>
#include <string>

using namespace ferry::entities_test;
using namespace std::chrono_literals;
using ferry::errc;
using ferry::render;
using ferry::detail::entities::shard_lease;
using ferry::detail::entities::state_store;
using ferry::test::eventually;

namespace {

template <class Backend>
class lease_test : public store_fixture<Backend> {};

/// Returns the stored lease of `shard` (a default one when there is none).
shard_lease lease_of(state_store& store, uint32_t shard) {
  auto all = store.leases();
  EXPECT_TRUE(all) << render(all.error());
  if (all)
    for (auto& x : *all)
      if (x.shard == shard)
        return x;
  return {};
}

} // namespace

TYPED_TEST_SUITE(lease_test, backends, backend_names);

TYPED_TEST(lease_test, AcquireOnAFreeShardIsGrantedWithEpochOne) {
  // Arrange
  auto sut = this->open_sut();
  ASSERT_NE(sut, nullptr);
  // Act
  auto first = sut->acquire(7, "member-a", 30s, 0ms);
  auto again = sut->acquire(7, "member-a", 30s, 0ms);
  // Assert
  ASSERT_TRUE(first) << render(first.error());
  EXPECT_TRUE(first->held);
  EXPECT_TRUE(first->taken);
  EXPECT_EQ(first->epoch, 1u);
  EXPECT_EQ(first->previous, "");
  EXPECT_FALSE(first->handed_off);
  ASSERT_TRUE(again) << render(again.error());
  EXPECT_TRUE(again->held);
  EXPECT_FALSE(again->taken);
  EXPECT_EQ(again->epoch, 1u);
  auto stored = lease_of(*sut, 7);
  EXPECT_EQ(stored.holder, "member-a");
  EXPECT_GT(stored.left, 25s);
}

TYPED_TEST(lease_test, SecondOwnerIsRefusedAndToldWhoHoldsTheShardForHowLong) {
  // Arrange
  auto sut = this->open_sut();
  ASSERT_NE(sut, nullptr);
  ASSERT_TRUE(sut->acquire(7, "member-a", 30s, 0ms));
  // Act
  auto refused = sut->acquire(7, "member-b", 30s, 0ms);
  // Assert
  ASSERT_TRUE(refused) << render(refused.error());
  EXPECT_FALSE(refused->held);
  EXPECT_EQ(refused->holder, "member-a");
  EXPECT_GT(refused->holder_left, 25s);
  EXPECT_LE(refused->holder_left, 30s);
  EXPECT_EQ(refused->epoch, 1u);
  EXPECT_EQ(lease_of(*sut, 7).holder, "member-a");
}

TYPED_TEST(lease_test,
           AfterTheTtlRunsOutTheNextOwnerTakesTheShardWithEpochTwo) {
  // Arrange
  auto sut = this->open_sut();
  ASSERT_NE(sut, nullptr);
  ASSERT_TRUE(sut->acquire(7, "member-a", 200ms, 0ms));
  // Act
  ferry::detail::entities::lease_grant grant;
  bool granted = eventually(
    [&] {
      auto x = sut->acquire(7, "member-b", 30s, 0ms);
      if (x)
        grant = *x;
      return x && x->held;
    },
    10s);
  // Assert
  ASSERT_TRUE(granted);
  EXPECT_TRUE(grant.taken);
  EXPECT_EQ(grant.epoch, 2u);
  EXPECT_EQ(grant.previous, "member-a");
  EXPECT_FALSE(grant.handed_off);
  auto late = sut->acquire(7, "member-a", 30s, 0ms);
  ASSERT_TRUE(late);
  EXPECT_FALSE(late->held);
  EXPECT_EQ(late->holder, "member-b");
}

TYPED_TEST(lease_test, OwnerRetakingItsLapsedShardKeepsTheEpoch) {
  // Arrange
  auto sut = this->open_sut();
  ASSERT_NE(sut, nullptr);
  ASSERT_TRUE(sut->acquire(7, "member-a", 200ms, 0ms));
  ASSERT_TRUE(eventually([&] { return lease_of(*sut, 7).left == 0ms; }, 10s));
  // Act
  auto retaken = sut->acquire(7, "member-a", 30s, 0ms);
  // Assert
  ASSERT_TRUE(retaken) << render(retaken.error());
  EXPECT_TRUE(retaken->held);
  EXPECT_TRUE(retaken->taken);
  EXPECT_EQ(retaken->epoch, 1u);
  EXPECT_EQ(retaken->previous, "member-a");
}

TYPED_TEST(lease_test, RenewExtendsOnlyTheOwnersUnexpiredShards) {
  // Arrange: a holds 1 and 2 (which runs out), b holds 3.
  auto sut = this->open_sut();
  ASSERT_NE(sut, nullptr);
  ASSERT_TRUE(sut->acquire(1, "member-a", 20s, 0ms));
  ASSERT_TRUE(sut->acquire(2, "member-a", 200ms, 0ms));
  ASSERT_TRUE(sut->acquire(3, "member-b", 20s, 0ms));
  ASSERT_TRUE(sut->acquire(4, "member-a", 20s, 0ms));
  ASSERT_TRUE(eventually([&] { return lease_of(*sut, 2).left == 0ms; }, 10s));
  // Act
  auto renewed = sut->renew("member-a", 60s);
  // Assert
  ASSERT_TRUE(renewed) << render(renewed.error());
  EXPECT_EQ(*renewed, (std::vector<uint32_t>{1, 4}));
  EXPECT_GT(lease_of(*sut, 1).left, 50s);
  EXPECT_GT(lease_of(*sut, 4).left, 50s);
  EXPECT_EQ(lease_of(*sut, 2).left, 0ms);
  EXPECT_LE(lease_of(*sut, 3).left, 20s);
  auto taken = sut->acquire(2, "member-b", 20s, 0ms);
  ASSERT_TRUE(taken);
  EXPECT_TRUE(taken->held);
  EXPECT_EQ(taken->epoch, 2u);
  auto none = sut->renew("member-c", 60s);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TYPED_TEST(lease_test, HandOffLetsOnlyItsOwnerTakeTheShardDuringTheGrace) {
  // Arrange
  auto sut = this->open_sut();
  ASSERT_NE(sut, nullptr);
  ASSERT_TRUE(sut->acquire(7, "member-a", 30s, 0ms));
  // Act
  auto released = sut->release(7, "member-a", "member-b");
  auto other = sut->acquire(7, "member-c", 30s, 30s);
  auto heir = sut->acquire(7, "member-b", 30s, 30s);
  // Assert
  EXPECT_FALSE(released) << render(released);
  ASSERT_TRUE(other) << render(other.error());
  EXPECT_FALSE(other->held);
  EXPECT_EQ(other->holder, "");
  EXPECT_EQ(other->reserved_for, "member-b");
  EXPECT_GT(other->reserved_left, 25s);
  ASSERT_TRUE(heir) << render(heir.error());
  EXPECT_TRUE(heir->held);
  EXPECT_TRUE(heir->taken);
  EXPECT_TRUE(heir->handed_off);
  EXPECT_EQ(heir->previous, "member-a");
  EXPECT_EQ(heir->epoch, 2u);
}

TYPED_TEST(lease_test, HandedOffShardGoesToAnyoneOnceTheGracePasses) {
  // Arrange
  auto sut = this->open_sut();
  ASSERT_NE(sut, nullptr);
  ASSERT_TRUE(sut->acquire(7, "member-a", 30s, 0ms));
  ASSERT_FALSE(sut->release(7, "member-a", "member-b"));
  // Act
  ferry::detail::entities::lease_grant grant;
  bool granted = eventually(
    [&] {
      auto x = sut->acquire(7, "member-c", 30s, 200ms);
      if (x)
        grant = *x;
      return x && x->held;
    },
    10s);
  // Assert
  ASSERT_TRUE(granted);
  EXPECT_FALSE(grant.handed_off);
  EXPECT_EQ(grant.previous, "member-a");
  EXPECT_EQ(grant.epoch, 2u);
  auto heir = sut->acquire(7, "member-b", 30s, 200ms);
  ASSERT_TRUE(heir);
  EXPECT_FALSE(heir->held);
  EXPECT_EQ(heir->holder, "member-c");
}

TYPED_TEST(lease_test, ReleaseWithoutHeirFreesTheShardAndByOthersDoesNothing) {
  // Arrange
  auto sut = this->open_sut();
  ASSERT_NE(sut, nullptr);
  ASSERT_TRUE(sut->acquire(7, "member-a", 30s, 0ms));
  // Act
  auto by_other = sut->release(7, "member-b", "");
  auto refused = sut->acquire(7, "member-b", 30s, 30s);
  auto by_holder = sut->release(7, "member-a", "");
  auto taken = sut->acquire(7, "member-b", 30s, 30s);
  // Assert
  EXPECT_FALSE(by_other) << render(by_other);
  ASSERT_TRUE(refused);
  EXPECT_FALSE(refused->held);
  EXPECT_FALSE(by_holder) << render(by_holder);
  ASSERT_TRUE(taken);
  EXPECT_TRUE(taken->held);
  EXPECT_FALSE(taken->handed_off);
  EXPECT_EQ(taken->previous, "member-a");
  EXPECT_EQ(taken->epoch, 2u);
  auto renewed = sut->renew("member-a", 30s);
  ASSERT_TRUE(renewed);
  EXPECT_TRUE(renewed->empty());
}

TYPED_TEST(lease_test, LeaseTimesOutsideTheirRangeAreInvalidConfig) {
  // Arrange
  auto sut = this->open_sut();
  ASSERT_NE(sut, nullptr);
  // Act
  auto zero_ttl = sut->acquire(7, "member-a", 0ms, 0ms);
  auto long_ttl = sut->acquire(7, "member-a", 25h, 0ms);
  auto negative_grace = sut->acquire(7, "member-a", 1s, -1ms);
  auto zero_renew = sut->renew("member-a", 0ms);
  auto no_owner = sut->acquire(7, "", 1s, 0ms);
  // Assert
  ASSERT_FALSE(zero_ttl);
  EXPECT_TRUE(has_code(zero_ttl.error(), errc::invalid_config));
  ASSERT_FALSE(long_ttl);
  EXPECT_TRUE(has_code(long_ttl.error(), errc::invalid_config));
  ASSERT_FALSE(negative_grace);
  EXPECT_TRUE(has_code(negative_grace.error(), errc::invalid_config));
  ASSERT_FALSE(zero_renew);
  EXPECT_TRUE(has_code(zero_renew.error(), errc::invalid_config));
  ASSERT_FALSE(no_owner);
  EXPECT_TRUE(has_code(no_owner.error(), errc::state_store_failed));
  auto all = sut->leases();
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->empty());
}
