// The cluster's gossip value: merging in any order agrees, and decoding
// treats bytes as hostile.
#include "cluster/gossip.hpp"

#include "ferry/errc.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

using namespace ferry::detail::cluster;

namespace {

// A random view over a small pool of members, so that two views share some.
gossip random_gossip(std::mt19937_64& rng) {
  gossip g;
  std::uniform_int_distribution<int> coin{0, 1};
  std::uniform_int_distribution<int> state{0, 4};
  std::uniform_int_distribution<uint64_t> small{0, 5};
  for (uint64_t uid = 1; uid <= 8; ++uid) {
    if (coin(rng) == 0)
      continue;
    member m;
    m.address = "10.0.0." + std::to_string(uid % 5) + ":4000";
    m.uid = uid;
    m.state = static_cast<member_state>(state(rng));
    m.up_number = m.state == member_state::joining ? 0 : small(rng);
    g.members.push_back(m);
  }
  std::sort(g.members.begin(), g.members.end(), member_less);
  for (uint64_t observer = 1; observer <= 8; ++observer)
    for (uint64_t subject = 1; subject <= 8; ++subject)
      if (observer != subject && small(rng) == 0)
        g.reachability.push_back(
          {observer, subject, coin(rng) == 1, small(rng)});
  if (small(rng) == 0)
    g.tombstones.insert(9 + small(rng));
  for (uint64_t uid = 1; uid <= 8; ++uid)
    if (coin(rng) == 1)
      g.version[uid] = small(rng);
  return g;
}

std::vector<std::byte> encoded(const gossip& g) {
  std::vector<std::byte> out;
  encode(g, out);
  return out;
}

} // namespace

TEST(version_vectors, CompareTellsSameBeforeAfterAndConcurrent) {
  version_vector a{{1, 2}, {2, 1}};
  version_vector b{{1, 2}, {2, 1}};
  EXPECT_EQ(compare(a, b), version_order::same);
  b[3] = 1;
  EXPECT_EQ(compare(a, b), version_order::before);
  EXPECT_EQ(compare(b, a), version_order::after);
  a[1] = 3;
  EXPECT_EQ(compare(a, b), version_order::concurrent);
  // A zero entry is the same as no entry.
  EXPECT_EQ(compare(version_vector{{7, 0}}, version_vector{}),
            version_order::same);
}

TEST(gossip, MergeIsCommutativeAssociativeAndIdempotent) {
  std::mt19937_64 rng{42};
  for (int trial = 0; trial < 2000; ++trial) {
    auto x = random_gossip(rng);
    auto y = random_gossip(rng);
    auto z = random_gossip(rng);
    auto xy = merge(x, y);
    ASSERT_EQ(xy, merge(y, x)) << "trial " << trial;
    ASSERT_EQ(merge(xy, z), merge(x, merge(y, z))) << "trial " << trial;
    ASSERT_EQ(merge(xy, xy), xy) << "trial " << trial;
  }
}

TEST(gossip, AStateNeverGoesBackInAMerge) {
  gossip x;
  x.members.push_back({"a:1", 1, member_state::down, 1});
  gossip y;
  y.members.push_back({"a:1", 1, member_state::up, 1});
  auto sut = merge(x, y);
  ASSERT_EQ(sut.members.size(), 1u);
  EXPECT_EQ(sut.members[0].state, member_state::down);
}

TEST(gossip, ATombstoneRemovesTheMemberAndItsRecordsForGood) {
  gossip x;
  x.members.push_back({"a:1", 1, member_state::up, 1});
  x.members.push_back({"b:1", 2, member_state::up, 2});
  x.reachability.push_back({1, 2, false, 1});
  gossip y;
  y.tombstones.insert(2);
  auto sut = merge(x, y);
  ASSERT_EQ(sut.members.size(), 1u);
  EXPECT_EQ(sut.members[0].uid, 1u);
  EXPECT_TRUE(sut.reachability.empty());
  // Stale gossip that still holds the member does not bring it back.
  EXPECT_EQ(merge(sut, x).members.size(), 1u);
}

TEST(gossip, AMemberIsUnreachableOnlyByAnObserverThatIsNotDown) {
  gossip sut;
  sut.members.push_back({"a:1", 1, member_state::up, 1});
  sut.members.push_back({"b:1", 2, member_state::up, 2});
  sut.reachability.push_back({1, 2, false, 1});
  EXPECT_TRUE(sut.unreachable(2));
  sut.members[0].state = member_state::down;
  EXPECT_FALSE(sut.unreachable(2));
}

TEST(gossip, EncodingRoundTrips) {
  std::mt19937_64 rng{7};
  for (int trial = 0; trial < 500; ++trial) {
    auto x = random_gossip(rng);
    x.seen = {1, 3};
    auto back = decode(encoded(x));
    ASSERT_TRUE(back) << to_string(back.error());
    ASSERT_EQ(*back, x) << "trial " << trial;
  }
}

TEST(gossip, DecodeRefusesEveryTruncation) {
  gossip x;
  x.members.push_back({"a:1", 1, member_state::up, 1});
  x.members.push_back({"b:1", 2, member_state::joining, 0});
  x.reachability.push_back({1, 2, false, 3});
  x.tombstones.insert(5);
  x.version[1] = 4;
  x.seen.insert(1);
  auto bytes = encoded(x);
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto sut = decode(std::span{bytes.data(), n});
    ASSERT_FALSE(sut) << "a prefix of " << n << " bytes was taken";
    EXPECT_EQ(sut.error(), ferry::errc::decode_failed);
  }
  bytes.push_back(std::byte{0});
  EXPECT_FALSE(decode(bytes)) << "a trailing byte was taken";
}

TEST(gossip, DecodeRefusesHostileCountsStatesAndOrder) {
  // A member count of 2^32 - 1 with nothing behind it.
  std::vector<std::byte> huge(4, std::byte{0xff});
  auto sut = decode(huge);
  ASSERT_FALSE(sut);
  EXPECT_NE(to_string(sut.error()).find("members"), std::string::npos);
  // An unknown state (and `removed`, which a view never holds).
  for (uint8_t state : {uint8_t{5}, uint8_t{200}}) {
    gossip g;
    g.members.push_back({"a:1", 1, member_state::up, 1});
    auto bytes = encoded(g);
    bytes[4 + 4 + 3 + 8] = std::byte{state};
    EXPECT_FALSE(decode(bytes)) << "state " << int{state};
  }
  // Members out of order, and the same member twice.
  gossip g;
  g.members.push_back({"b:1", 2, member_state::up, 1});
  g.members.push_back({"a:1", 1, member_state::up, 2});
  EXPECT_FALSE(decode(encoded(g)));
  g.members[1] = g.members[0];
  EXPECT_FALSE(decode(encoded(g)));
}

TEST(gossip, RandomBytesAreRefusedOrReadBackExactly) {
  std::mt19937_64 rng{1};
  std::uniform_int_distribution<int> byte{0, 255};
  std::uniform_int_distribution<size_t> len{0, 200};
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<std::byte> bytes(len(rng));
    for (auto& b : bytes)
      b = std::byte(byte(rng));
    // Small counts make the random input more often well formed.
    if (bytes.size() >= 4 && trial % 2 == 0) {
      bytes[0] = std::byte(byte(rng) % 3);
      bytes[1] = bytes[2] = bytes[3] = std::byte{0};
    }
    if (auto sut = decode(bytes)) {
      ASSERT_EQ(encoded(*sut), bytes) << "trial " << trial;
    }
  }
}
