// One node's membership view and its life-cycle rules, and views of many
// nodes exchanging gossip in random order until they agree.
#include "cluster/membership.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

using namespace ferry::detail::cluster;

namespace {

std::string address_of(uint64_t uid) {
  return "10.0.0." + std::to_string(uid) + ":4000";
}

member joiner(uint64_t uid) {
  return {address_of(uid), uid, member_state::joining, 0};
}

/// What `diff` reported: each event's kind and member.
std::vector<std::pair<member_event::kind_t, uint64_t>>
kinds_of(const std::vector<member_event>& events) {
  std::vector<std::pair<member_event::kind_t, uint64_t>> out;
  for (auto& e : events)
    out.emplace_back(e.kind, e.who.uid);
  return out;
}

// Nodes that gossip with each other in a seeded random order: each round,
// every node sends its view to one random live peer, which answers with its
// own when the sender's was older.
struct cluster_sim {
  std::vector<std::unique_ptr<membership>> nodes;
  std::mt19937_64 rng{3};

  membership& add(uint64_t uid) {
    nodes.push_back(std::make_unique<membership>(address_of(uid), uid));
    return *nodes.back();
  }

  membership* by_uid(uint64_t uid) {
    for (auto& n : nodes)
      if (n->self().uid == uid)
        return n.get();
    return nullptr;
  }

  void round() {
    for (auto& n : nodes) {
      auto peers = n->live_peers();
      if (peers.empty())
        continue;
      std::uniform_int_distribution<size_t> pick{0, peers.size() - 1};
      auto* to = by_uid(peers[pick(rng)].uid);
      if (to == nullptr)
        continue;
      if (to->receive(n->view()) == version_order::before)
        n->receive(to->view());
    }
    for (auto& n : nodes)
      n->leader_actions();
  }

  /// Node 1 forms the cluster and lets nodes 2..n in; rounds run until
  /// every node agrees. Returns whether they did.
  bool form(uint64_t n) {
    add(1).form();
    for (uint64_t uid = 2; uid <= n; ++uid) {
      add(uid);
      nodes[0]->add_joining(joiner(uid));
    }
    for (int i = 0; i < 20 && !all_agree(); ++i)
      round();
    return all_agree();
  }

  bool all_agree() const {
    for (auto& n : nodes)
      if (!n->converged() || n->view().members != nodes[0]->view().members)
        return false;
    return true;
  }
};

} // namespace

TEST(membership, ANodeThatFormsAClusterIsUpAndLeads) {
  membership sut{address_of(1), 1};
  EXPECT_FALSE(sut.joined());
  EXPECT_EQ(sut.self().state, member_state::joining);
  sut.form();
  EXPECT_TRUE(sut.joined());
  EXPECT_EQ(sut.self().state, member_state::up);
  EXPECT_EQ(sut.self().up_number, 1u);
  EXPECT_EQ(sut.leader(), 1u);
  EXPECT_TRUE(sut.converged());
}

TEST(membership, AJoiningNodeGoesUpOnlyOnceEveryMemberHasSeenIt) {
  membership seed{address_of(1), 1};
  seed.form();
  membership other{address_of(2), 2};
  ASSERT_TRUE(seed.add_joining(joiner(2)));
  // Node 2 has not seen the view that holds it: no convergence, no up.
  EXPECT_FALSE(seed.converged());
  EXPECT_FALSE(seed.leader_actions());
  EXPECT_EQ(seed.view().find(2)->state, member_state::joining);
  // Node 2 takes the view and answers; now both have seen it.
  other.receive(seed.view());
  EXPECT_TRUE(other.joined());
  seed.receive(other.view());
  ASSERT_TRUE(seed.converged());
  ASSERT_TRUE(seed.leader_actions());
  EXPECT_EQ(seed.view().find(2)->state, member_state::up);
  EXPECT_EQ(seed.view().find(2)->up_number, 2u);
}

TEST(membership, ANewIncarnationAtAnAddressDownsTheOldOne) {
  membership sut{address_of(1), 1};
  sut.form();
  ASSERT_TRUE(sut.add_joining(joiner(2)));
  member restarted{address_of(2), 22, member_state::joining, 0};
  ASSERT_TRUE(sut.add_joining(restarted));
  EXPECT_EQ(sut.view().find(2)->state, member_state::down);
  EXPECT_EQ(sut.view().find(22)->state, member_state::joining);
  // The same incarnation again, or a removed one, is not added.
  EXPECT_FALSE(sut.add_joining(restarted));
}

TEST(membership, UnreachableMembersBlockConvergenceUntilDowned) {
  cluster_sim sim;
  ASSERT_TRUE(sim.form(4));
  // Node 4 goes silent; node 1 notices.
  sim.nodes.pop_back();
  ASSERT_TRUE(sim.nodes[0]->observe(4, false));
  for (int i = 0; i < 10; ++i)
    sim.round();
  for (auto& n : sim.nodes) {
    EXPECT_EQ(n->unreachable(), std::vector<uint64_t>{4});
    EXPECT_FALSE(n->converged());
  }
  // Downing it lets the view converge; the leader then removes it.
  sim.nodes[1]->down(4);
  for (int i = 0; i < 20 && !sim.all_agree(); ++i)
    sim.round();
  ASSERT_TRUE(sim.all_agree());
  for (auto& n : sim.nodes) {
    EXPECT_EQ(n->view().find(4), nullptr);
    EXPECT_EQ(n->view().tombstones.count(4), 1u);
  }
}

TEST(membership, AMemberThatAnswersAgainBecomesReachable) {
  membership sut{address_of(1), 1};
  sut.form();
  sut.add_joining(joiner(2));
  ASSERT_TRUE(sut.observe(2, false));
  EXPECT_EQ(sut.unreachable(), std::vector<uint64_t>{2});
  EXPECT_FALSE(sut.observe(2, false));
  ASSERT_TRUE(sut.observe(2, true));
  EXPECT_TRUE(sut.unreachable().empty());
}

TEST(membership, ALeavingMemberExitsAndIsRemoved) {
  cluster_sim sim;
  ASSERT_TRUE(sim.form(3));
  ASSERT_TRUE(sim.nodes[2]->leave(3));
  auto gone_everywhere = [&] {
    return sim.nodes[0]->view().tombstones.count(3) == 1
           && sim.nodes[1]->view().tombstones.count(3) == 1;
  };
  int rounds = 0;
  for (; rounds < 20 && !gone_everywhere(); ++rounds)
    sim.round();
  ASSERT_TRUE(gone_everywhere()) << "after " << rounds << " rounds";
  EXPECT_EQ(sim.nodes[1]->view().find(3), nullptr);
  EXPECT_TRUE(sim.nodes[0]->converged());
}

TEST(membership, ThirtyTwoNodesJoiningThroughTwoSeedsConverge) {
  cluster_sim sim;
  sim.add(1).form();
  sim.add(2);
  sim.nodes[0]->add_joining(joiner(2));
  for (uint64_t uid = 3; uid <= 32; ++uid) {
    sim.add(uid);
    // Each joins through one of the two seeds.
    sim.nodes[uid % 2]->add_joining(joiner(uid));
  }
  int rounds = 0;
  while (!sim.all_agree() && rounds < 100) {
    sim.round();
    ++rounds;
  }
  ASSERT_TRUE(sim.all_agree()) << "after " << rounds << " rounds";
  for (auto& m : sim.nodes[0]->view().members)
    EXPECT_EQ(m.state, member_state::up) << m.address;
  EXPECT_EQ(sim.nodes[0]->view().members.size(), 32u);
}

TEST(membership, DiffReportsWhatAWatcherSees) {
  gossip before;
  before.members = {{address_of(1), 1, member_state::up, 1},
                    {address_of(2), 2, member_state::joining, 0},
                    {address_of(3), 3, member_state::up, 2},
                    {address_of(4), 4, member_state::up, 3}};
  auto after = before;
  after.members[1].state = member_state::up;        // 2 up
  after.members[2].state = member_state::down;      // 3 down
  after.members.pop_back();                         // 4 removed
  after.tombstones.insert(4);
  after.reachability.push_back({1, 2, false, 1});   // 2 unreachable
  auto events = membership::diff(before, false, after, true, 1);
  auto got = kinds_of(events);
  std::vector<std::pair<member_event::kind_t, uint64_t>> want{
    {member_event::up, 2},
    {member_event::unreachable, 2},
    {member_event::down, 3},
    {member_event::removed, 4},
    {member_event::converged, 1}};
  EXPECT_EQ(got, want);
}

TEST(membership, DiffReportsAMemberUnreachableBeforeDownWhenBothCameAtOnce) {
  gossip before;
  before.members = {{address_of(1), 1, member_state::up, 1},
                    {address_of(2), 2, member_state::up, 2},
                    {address_of(3), 3, member_state::up, 3},
                    {address_of(4), 4, member_state::up, 4}};
  auto after = before;
  after.members[2].state = member_state::down;    // 3 unreachable and down
  after.reachability.push_back({2, 3, false, 1});
  after.members[3].state = member_state::down;    // 4 downed while reachable
  auto events = membership::diff(before, true, after, true, 1);
  auto got = kinds_of(events);
  std::vector<std::pair<member_event::kind_t, uint64_t>> want{
    {member_event::unreachable, 3},
    {member_event::down, 3},
    {member_event::down, 4}};
  EXPECT_EQ(got, want);
}

TEST(membership, DiffReportsANewVersionThatArrivesConvergedAsConverged) {
  // Arrange: a converged view, then a newer one (a member removed) that
  // every member has seen by the time it arrives here.
  gossip before;
  before.members = {{address_of(1), 1, member_state::up, 1},
                    {address_of(2), 2, member_state::up, 2},
                    {address_of(3), 3, member_state::exiting, 3}};
  before.version[1] = 1;
  auto after = before;
  after.members.pop_back();
  after.tombstones.insert(3);
  after.version[1] = 2;
  // Act
  auto events = membership::diff(before, true, after, true, 1);
  auto same = membership::diff(after, true, after, true, 1);
  // Assert: removed, then converged on the new version; nothing for a
  // version that did not change.
  auto got = kinds_of(events);
  std::vector<std::pair<member_event::kind_t, uint64_t>> want{
    {member_event::removed, 3}, {member_event::converged, 1}};
  EXPECT_EQ(got, want);
  EXPECT_TRUE(same.empty());
}
