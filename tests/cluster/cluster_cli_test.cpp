// ferry-cluster, the operator's tool, against two member processes
// (membership_member.cpp) on loopback with the `none` downing policy: it
// lists both members up, downs one on the operator's word (the downed
// member hears it and stops acting as a member), and reports a member it does not know,
// a node that does not answer and bad arguments with their exit codes.
#include "ferry/test/eventually.hpp"
#include "ferry/test/child_process.hpp"
#include "ferry/test/ports.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace ferry::test {
namespace {

using namespace std::chrono_literals;

/// Runs ferry-cluster with `args`; returns its exit status and output.
std::pair<exit_status, std::string> tool(std::vector<std::string> args) {
  child_process proc{FERRY_CLUSTER_TOOL, std::move(args)};
  proc.close_stdin();
  std::string out;
  while (auto line = proc.read_line(30s))
    out += *line + "\n";
  return {proc.wait(30s), out};
}

class cluster_cli : public testing::Test {
protected:
  void SetUp() override {
    port_block ports{2};
    for (size_t i = 0; i < 2; ++i)
      addresses_.push_back("127.0.0.1:" + std::to_string(ports[i]));
    ports.release();
    for (size_t i = 0; i < 2; ++i) {
      members_.push_back(std::make_unique<child_process>(
        FERRY_MEMBERSHIP_MEMBER,
        std::vector<std::string>{
          "--ferry.node-name=m" + std::to_string(i + 1),
          "--ferry.store.disabled", "--ferry.cluster.name=cli",
          "--ferry.cluster.address=" + addresses_[i],
          "--ferry.cluster.seeds=[\"" + addresses_[0] + "\"]",
          "--ferry.cluster.seed-timeout=200ms",
          "--ferry.cluster.gossip-interval=100ms",
          "--ferry.cluster.heartbeat-interval=100ms",
          "--ferry.cluster.downing=none"}));
      ASSERT_EQ(members_.back()->read_line(30s).value_or(""), "started");
    }
  }

  void TearDown() override {
    for (auto& m : members_)
      m->close_stdin();
    for (auto& m : members_)
      m->wait(10s);
  }

  /// Waits up to 20 s for member `i`'s view line, with a newline at its
  /// end, to contain `part`.
  testing::AssertionResult view_shows(size_t i, const std::string& part) {
    std::string line;
    if (ferry::test::eventually(
          [&] {
            members_[i]->write_line("view");
            line = members_[i]->read_line(10s).value_or("") + "\n";
            return line.find(part) != std::string::npos;
          },
          20s, 50ms))
      return testing::AssertionSuccess();
    return testing::AssertionFailure() << "m" << i + 1 << " shows " << line;
  }

  std::vector<std::string> addresses_;
  std::vector<std::unique_ptr<child_process>> members_;
};

} // namespace

TEST_F(cluster_cli, ListsTheMembersAndDownsOneOnTheOperatorsWord) {
  ASSERT_TRUE(view_shows(0, "members=m1:up:r,m2:up:r\n"));
  auto [listed, table] = tool({addresses_[0], "members"});
  ASSERT_TRUE(listed.ok()) << to_string(listed) << "\n" << table;
  EXPECT_NE(table.find("NAME"), std::string::npos) << table;
  for (size_t i = 0; i < 2; ++i) {
    auto row = table.find("m" + std::to_string(i + 1) + " ");
    ASSERT_NE(row, std::string::npos) << table;
    auto line = table.substr(row, table.find('\n', row) - row);
    EXPECT_NE(line.find(addresses_[i]), std::string::npos) << line;
    EXPECT_NE(line.find(" up "), std::string::npos) << line;
    EXPECT_NE(line.find(" yes "), std::string::npos) << line;
  }
  auto [downed, said] = tool({addresses_[0], "down", addresses_[1]});
  ASSERT_TRUE(downed.ok()) << to_string(downed) << "\n" << said;
  EXPECT_EQ(said, "downed " + addresses_[1] + "\n");
  // m1 downs m2 and, alone in the view, removes it at once; m2 hears that
  // it is down before its link ends (the removal comes after, on no link),
  // and stops acting as a member: it holds no link.
  EXPECT_TRUE(view_shows(0, "members=m1:up:r\n"));
  EXPECT_TRUE(view_shows(1, "self=down inc=1 links=0"));
}

TEST_F(cluster_cli, ReportsAnUnknownMemberAnAbsentNodeAndBadArguments) {
  ASSERT_TRUE(view_shows(0, "members=m1:up:r,m2:up:r\n"));
  auto [unknown, said] = tool({addresses_[0], "down", "127.0.0.1:1"});
  EXPECT_EQ(unknown.code, 1) << said;
  auto [absent, said2] = tool({"127.0.0.1:1", "members"});
  EXPECT_EQ(absent.code, 1) << said2;
  auto [bad, said3] = tool({addresses_[0], "frobnicate"});
  EXPECT_EQ(bad.code, 2) << said3;
}

} // namespace ferry::test
