// The cluster registry as one node holds it: entries other members tell of
// are found until they are gone or their member is dropped, and an entry
// told again with a new handle (the member's link came back, and with it a
// new proxy) takes that handle, so `find` does not keep returning the
// proxy that ended with the old link.
#include "cluster/registry_table.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>

#include <gtest/gtest.h>

using namespace ferry::detail::cluster;

namespace {

caf::behavior idle() {
  return {[](int) {}};
}

class registry_table_test : public testing::Test {
protected:
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::actor first = sys.spawn(idle);
  caf::actor second = sys.spawn(idle);
  registry_table sut;

  ~registry_table_test() override {
    caf::anon_send_exit(first, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(second, caf::exit_reason::user_shutdown);
  }
};

} // namespace

TEST_F(registry_table_test, EntryOfAnotherMemberIsFoundUntilItIsGone) {
  EXPECT_EQ(sut.apply(7, 1, "svc", first, true), "svc");
  EXPECT_EQ(sut.find("svc"), std::vector<caf::actor>{first});
  EXPECT_EQ(sut.apply(7, 1, "svc", first, false), "svc");
  EXPECT_TRUE(sut.find("svc").empty());
}

TEST_F(registry_table_test, EntryToldAgainWithTheSameHandleChangesNothing) {
  ASSERT_EQ(sut.apply(7, 1, "svc", first, true), "svc");
  EXPECT_EQ(sut.apply(7, 1, "svc", first, true), "");
  EXPECT_EQ(sut.find("svc"), std::vector<caf::actor>{first});
}

TEST_F(registry_table_test, EntryToldAgainWithANewHandleTakesIt) {
  ASSERT_EQ(sut.apply(7, 1, "svc", first, true), "svc");
  // Act: the member's link came back, and it told its entries again.
  auto changed = sut.apply(7, 1, "svc", second, true);
  // Assert
  EXPECT_EQ(changed, "svc");
  EXPECT_EQ(sut.find("svc"), std::vector<caf::actor>{second});
}

TEST_F(registry_table_test, DroppingAMemberDropsItsEntries) {
  ASSERT_EQ(sut.apply(7, 1, "svc", first, true), "svc");
  ASSERT_EQ(sut.apply(8, 1, "svc", second, true), "svc");
  EXPECT_EQ(sut.drop_member(7), std::vector<std::string>{"svc"});
  EXPECT_EQ(sut.find("svc"), std::vector<caf::actor>{second});
}
