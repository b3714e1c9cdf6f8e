// Downing policies: every node of a split cluster reaches the verdict of its
// side from its own view.
#include "cluster/downing.hpp"

#include "ferry/errc.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace ferry::detail::cluster;

namespace {

// Members 1..n, up in that order, at addresses that sort as their uids.
gossip view_of(uint64_t n) {
  gossip g;
  for (uint64_t uid = 1; uid <= n; ++uid)
    g.members.push_back({"10.0.0." + std::to_string(10 + uid) + ":4000", uid,
                         member_state::up, uid});
  return g;
}

// `observer` holds each of `subjects` unreachable.
void cut(gossip& g, uint64_t observer, std::initializer_list<uint64_t> subjects) {
  for (auto s : subjects)
    g.reachability.push_back({observer, s, false, s});
}

} // namespace

TEST(downing, PolicyNamesParseAndAnUnknownOneIsRefused) {
  EXPECT_EQ(parse_downing_policy("keep-majority"),
            downing_policy::keep_majority);
  EXPECT_EQ(parse_downing_policy("keep-oldest"), downing_policy::keep_oldest);
  EXPECT_EQ(parse_downing_policy("none"), downing_policy::none);
  auto sut = parse_downing_policy("auto");
  ASSERT_FALSE(sut);
  EXPECT_EQ(sut.error(), ferry::errc::invalid_config);
}

TEST(downing, KeepMajorityDownsTheSmallerSideOnBothSides) {
  // 3 | 2: the 3 hold 4 and 5 unreachable, the 2 hold 1, 2, 3 unreachable.
  auto three = view_of(5);
  cut(three, 1, {4, 5});
  auto two = view_of(5);
  cut(two, 4, {1, 2, 3});
  auto big = decide(downing_policy::keep_majority, three, 1);
  EXPECT_EQ(big.down, (std::vector<uint64_t>{4, 5}));
  EXPECT_FALSE(big.down_self);
  auto small = decide(downing_policy::keep_majority, two, 5);
  EXPECT_TRUE(small.down_self);
  EXPECT_TRUE(small.down.empty());
}

TEST(downing, KeepMajorityOnATieKeepsTheSideWithTheLowestAddress) {
  auto left = view_of(4);
  cut(left, 1, {3, 4});
  auto right = view_of(4);
  cut(right, 3, {1, 2});
  EXPECT_FALSE(decide(downing_policy::keep_majority, left, 2).down_self);
  EXPECT_TRUE(decide(downing_policy::keep_majority, right, 4).down_self);
}

TEST(downing, KeepOldestKeepsTheSideOfTheFirstMemberUp) {
  auto old_side = view_of(5);
  cut(old_side, 1, {2, 3, 4});
  auto young_side = view_of(5);
  cut(young_side, 2, {1, 5});
  EXPECT_EQ(decide(downing_policy::keep_oldest, old_side, 5).down,
            (std::vector<uint64_t>{2, 3, 4}));
  EXPECT_TRUE(decide(downing_policy::keep_oldest, young_side, 3).down_self);
}

TEST(downing, NothingIsDecidedWithoutUnreachableMembersOrWithPolicyNone) {
  auto g = view_of(3);
  auto sut = decide(downing_policy::keep_majority, g, 1);
  EXPECT_TRUE(sut.down.empty());
  EXPECT_FALSE(sut.down_self);
  cut(g, 1, {3});
  sut = decide(downing_policy::none, g, 1);
  EXPECT_TRUE(sut.down.empty());
  EXPECT_FALSE(sut.down_self);
}

TEST(downing, MembersAlreadyDownAreNotCounted) {
  // 5 members, 2 of them down already: the remaining 3 split 2 | 1.
  auto g = view_of(5);
  g.members[3].state = member_state::down;
  g.members[4].state = member_state::down;
  cut(g, 1, {3});
  auto sut = decide(downing_policy::keep_majority, g, 1);
  EXPECT_EQ(sut.down, (std::vector<uint64_t>{3}));
}
