// Which message types need CAF_ALLOW_UNSAFE_MESSAGE_TYPE, between two
// processes (docs/limits.md, "When a message type needs
// CAF_ALLOW_UNSAFE_MESSAGE_TYPE"): a plain aggregate with neither an inspect
// function nor the macro crosses a link in every structured family, the caf
// family included; a class described only by its inspect function crosses in
// the caf family; a class marked with the macro crosses in the families that
// encode it, and the caf family, which would skip it, refuses it naming the
// macro. The types that fail to compile without the macro are the ctest
// cases framework_message_types_* (tests/framework/compile/).
//
// Each test runs a local node in the test process and a peer
// (ferry_test_node) as a child process (node_fixture.hpp).
#include "node_fixture.hpp"

#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

class message_types : public node_fixture {
protected:
  /// Starts peer B and the local node, both sending with `families` only,
  /// and returns B's echo actor.
  caf::actor echo_sending_with(const std::vector<std::string>& families) {
    std::string list;
    for (auto& family : families)
      list += (list.empty() ? "\"" : ", \"") + family + "\"";
    auto& b = start_peer("B", {"--ferry.link.serializers=[" + list + "]"});
    cfg.default_link.serializers = families;
    auto echo = local().remote_actor("127.0.0.1", b.port);
    EXPECT_TRUE(echo) << ferry::render(echo.error());
    return echo ? *echo : caf::actor{};
  }

  /// Returns how many messages the local node sent to B with each family.
  std::map<std::string, uint64_t> sent_by_family() {
    auto stats = local().stats("B");
    EXPECT_TRUE(stats) << ferry::render(stats.error());
    return stats ? stats->sent_by_family : std::map<std::string, uint64_t>{};
  }
};

class plain_aggregate_in_family
  : public message_types,
    public testing::WithParamInterface<std::string> {};

TEST_P(plain_aggregate_in_family, PlainAggregateWithoutInspectOrMacroRoundTrips) {
  // Arrange
  auto echo = echo_sending_with({GetParam()});
  plain_point sent{41, "abc", {1.5, 2.5, 3.5}};
  // Act
  auto back = ask<plain_point>(echo, sent);
  // Assert: B got every field, and answered with the same type.
  ASSERT_TRUE(back) << ferry::render(back.error());
  EXPECT_EQ(*back, (plain_point{42, "cba", {3.5, 2.5, 1.5}}));
  EXPECT_EQ(sent_by_family()[GetParam()], 1u);
}

INSTANTIATE_TEST_SUITE_P(families, plain_aggregate_in_family,
                         testing::Values("cereal.binary", "cereal.portable",
                                         "cereal.json", "msgpack", "caf"),
                         family_test_name);

TEST_F(message_types, ClassWithOnlyAnInspectFunctionRoundTripsInTheCafFamily) {
  // Arrange
  auto echo = echo_sending_with({"caf"});
  // Act
  auto back = ask<inspected_only>(echo, inspected_only{21});
  // Assert
  ASSERT_TRUE(back) << ferry::render(back.error());
  EXPECT_EQ(back->value(), 42);
  EXPECT_EQ(sent_by_family()["caf"], 1u);
}

TEST_F(message_types, MarkedClassTravelsWithTheNextFamilyInsteadOfCaf) {
  // Arrange: cereal_only is marked CAF_ALLOW_UNSAFE_MESSAGE_TYPE.
  auto echo = echo_sending_with({"caf", "cereal.binary"});
  // Act
  auto back = ask<int32_t>(echo, cereal_only{21});
  // Assert: it crossed with cereal.binary; caf was passed over.
  ASSERT_TRUE(back) << ferry::render(back.error());
  EXPECT_EQ(*back, 42);
  auto sent = sent_by_family();
  EXPECT_EQ(sent["cereal.binary"], 1u);
  EXPECT_EQ(sent.count("caf"), 0u);
}

TEST_F(message_types, MarkedClassIsRefusedByALinkThatSendsOnlyCaf) {
  // Arrange
  auto echo = echo_sending_with({"caf"});
  // Act
  auto back = ask<int32_t>(echo, cereal_only{21});
  // Assert: refused before sending, naming the macro as the reason.
  ASSERT_FALSE(back);
  auto text = ferry::render(back.error());
  EXPECT_NE(text.find("no_family_can_encode"), std::string::npos) << text;
  EXPECT_NE(text.find("marked CAF_ALLOW_UNSAFE_MESSAGE_TYPE"),
            std::string::npos)
    << text;
  EXPECT_EQ(sent_by_family().count("caf"), 0u);
}

} // namespace
