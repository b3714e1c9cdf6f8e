// Actor handles inside messages, between processes, in every structured
// family: a handle to an actor of the sending node arrives as a working
// proxy; a handle to the receiving node's own actor comes back as that actor
// itself; handles inside a user type (a vector, a map) travel the same way
// (the caf family hands a type with an inspect function of its own that
// holds a handle to the next family of the link); a
// handle to a third node's actor reaches it through the node that sent it;
// an actor held only by a peer's handle lives while that peer can address
// it, and goes when the peer is gone.
//
// The peer (ferry_test_node) runs "handles": it answers a handle, a crew or
// a badge with what it received, and (handle, text) by asking the handle for text.
#include "node_fixture.hpp"

#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <optional>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

/// Reverses strings (an actor of the local node).
caf::behavior reverser() {
  return {[](const std::string& x) { return std::string{x.rbegin(), x.rend()}; }};
}

class handles_in_family : public node_fixture,
                          public testing::WithParamInterface<std::string> {
protected:
  /// Starts peer `name` and the local node, both sending with the family
  /// under test only.
  peer& start_with_family(const std::string& name) {
    auto& p = start_peer(name, {"--ferry.link.serializers=[\"" + GetParam()
                                  + "\"]"});
    cfg.default_link.serializers = {GetParam()};
    return p;
  }
};

TEST_P(handles_in_family, OwnActorComesBackAsItselfAndWorksThere) {
  // Arrange
  auto& b = start_with_family("B");
  auto handles = local().remote_actor("127.0.0.1", b.port, "handles");
  ASSERT_TRUE(handles) << ferry::render(handles.error());
  auto mine = local().system().spawn(reverser);
  // Act: B sends the handle back, and uses it.
  auto back = ask<caf::actor>(*handles, mine);
  auto used = ask<std::string>(*handles, mine, std::string{"abc"});
  // Assert
  ASSERT_TRUE(back) << ferry::render(back.error());
  EXPECT_EQ(*back, mine);
  ASSERT_TRUE(used) << ferry::render(used.error());
  EXPECT_EQ(*used, "cba");
  caf::anon_send_exit(mine, caf::exit_reason::user_shutdown);
}

/// Families that carry a plain aggregate holding handles: every structured
/// family, since ferry walks such a type itself.
class handles_in_user_types : public handles_in_family {};

TEST_P(handles_in_user_types, HandlesInsideAUserTypeTravelBothWays) {
  // Arrange: a crew of two local actors, one of them also by role.
  auto& b = start_with_family("B");
  auto handles = local().remote_actor("127.0.0.1", b.port, "handles");
  ASSERT_TRUE(handles) << ferry::render(handles.error());
  auto first = local().system().spawn(reverser);
  auto second = local().system().spawn(reverser);
  crew sent{"deck", {first, second, caf::actor{}}, {{"lead", second}}};
  // Act
  auto back = ask<crew>(*handles, sent);
  // Assert: the same actors, the null handle null.
  ASSERT_TRUE(back) << ferry::render(back.error());
  EXPECT_EQ(back->name, "deck");
  ASSERT_EQ(back->members.size(), 3u);
  EXPECT_EQ(back->members[0], first);
  EXPECT_EQ(back->members[1], second);
  EXPECT_FALSE(back->members[2]);
  ASSERT_EQ(back->by_role.count("lead"), 1u);
  EXPECT_EQ(back->by_role.at("lead"), second);
  caf::anon_send_exit(first, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(second, caf::exit_reason::user_shutdown);
}

TEST_P(handles_in_family, HandleToAThirdNodesActorReachesIt) {
  // Arrange: B and C know nothing of each other; this node knows both.
  auto& b = start_with_family("B");
  auto& c = start_with_family("C");
  auto handles = local().remote_actor("127.0.0.1", b.port, "handles");
  ASSERT_TRUE(handles) << ferry::render(handles.error());
  auto echo_on_c = local().remote_actor("127.0.0.1", c.port);
  ASSERT_TRUE(echo_on_c) << ferry::render(echo_on_c.error());
  // Act: B asks C's echo through the handle this node gave it.
  auto used = ask<std::string>(*handles, *echo_on_c, std::string{"ferry"});
  // Assert: C's echo reversed it.
  ASSERT_TRUE(used) << ferry::render(used.error());
  EXPECT_EQ(*used, "yrref");
}

TEST_F(node_fixture, ActorHeldOnlyByAPeerLivesWhileThePeerLastsAndNoLonger) {
  // Arrange: B keeps a handle to a local actor; this node keeps none.
  auto& b = start_peer("B");
  auto keeper = local().remote_actor("127.0.0.1", b.port, "keeper");
  ASSERT_TRUE(keeper) << ferry::render(keeper.error());
  caf::scoped_actor self{local().system()};
  {
    auto kept = local().system().spawn(reverser);
    self->monitor(kept);
    auto ack = ask<std::string>(*keeper, std::string{"keep"}, kept);
    ASSERT_TRUE(ack) << ferry::render(ack.error());
  }
  // Act / Assert: B can still reach it through its handle.
  auto used = ask<std::string>(*keeper, std::string{"call"},
                               std::string{"abc"});
  ASSERT_TRUE(used) << ferry::render(used.error());
  EXPECT_EQ(*used, "cba");
  // Act: B's process is killed.
  b.process->kill(SIGKILL);
  // Assert: nothing holds the actor any more: it goes (unreachable).
  std::optional<caf::error> reason;
  self->receive([&](caf::down_msg& down) { reason = down.reason; },
                caf::after(30s) >> [] {});
  ASSERT_TRUE(reason) << "the actor outlived the only peer that held it";
  EXPECT_EQ(*reason, caf::exit_reason::unreachable) << ferry::render(*reason);
}

TEST_F(node_fixture, HandleInATypeWithItsOwnInspectSkipsTheCafFamilyForTheNext) {
  // Arrange: links send with caf first, msgpack second.
  auto& b = start_peer("B", {"--ferry.link.serializers=[\"caf\", \"msgpack\"]"});
  cfg.default_link.serializers = {"caf", "msgpack"};
  auto handles = local().remote_actor("127.0.0.1", b.port, "handles");
  ASSERT_TRUE(handles) << ferry::render(handles.error());
  auto first = local().system().spawn(reverser);
  // Act
  auto back = ask<badge>(*handles, badge{"solo", first});
  // Assert: it travelled (with msgpack), the actor came back as itself.
  ASSERT_TRUE(back) << ferry::render(back.error());
  EXPECT_EQ(back->name, "solo");
  EXPECT_EQ(back->holder, first);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->sent_by_family["msgpack"], 1u);
  EXPECT_EQ(stats->sent_by_family.count("caf"), 0u);
  caf::anon_send_exit(first, caf::exit_reason::user_shutdown);
}

INSTANTIATE_TEST_SUITE_P(families, handles_in_family,
                         testing::Values("cereal.binary", "cereal.portable",
                                         "cereal.json", "msgpack", "caf"),
                         family_test_name);

INSTANTIATE_TEST_SUITE_P(families, handles_in_user_types,
                         testing::Values("cereal.binary", "cereal.portable",
                                         "cereal.json", "msgpack", "caf"),
                         family_test_name);

} // namespace
