// Nodes of two builds of one program (versioned_node.cpp at
// FERRY_TEST_TYPE_VERSION 1 and 2) exchange one value of each type of
// versioned_types.hpp, in every built-in family, in both directions, and
// each outcome is checked against what docs/evolution.md promises:
// - a type that is the same in both builds arrives as sent;
// - an evolving type (with a ferry_version) that changed (a member added,
//   removed, renamed, reordered, widened, or a nested type changed) arrives
//   in msgpack and cereal.json (by member name) and in cereal.binary and
//   cereal.portable (read by the sender's shape): members the receiver lacks
//   are skipped, members the sender lacks take the receiver's defaults, and
//   a widened value that does not fit the narrower member is refused;
// - in every other family, and for a type without a version, a changed
//   type is refused with `type_mismatch` before anything is decoded;
// - both nodes log each changed type once when the link is made.
// No combination yields a value other than these, nor a crash.
#include "ferry/test/child_process.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

using namespace std::chrono_literals;
using ferry::test::child_process;

namespace {

/// What the server reads of each value a sender of `version` sends, in a
/// family that bridges evolving types.
std::map<std::string, std::string> read_bridged(int version) {
  if (version == 1) // received by a build of version 2
    return {{"same", "id=7 name=seven"},
            {"added", "id=1 name=one price=9.5"},
            {"removed", "id=2 name=two"},
            {"renamed", "id=3 label="},
            {"reordered", "id=6 name=six"},
            {"widened", "id=4 qty=40"},
            {"nested", "id=5 lines=[item=pen qty=2]"},
            {"pod_same", "id=9 value=0.5"}};
  return {{"same", "id=7 name=seven"},
          {"added", "id=1 name=one"},
          {"removed", "id=2 name=two price=7.25"},
          {"renamed", "id=3 name="},
          {"reordered", "id=6 name=six"},
          {"widened", "id=4 qty=40"},
          {"nested", "id=5 lines=[item=pen qty=2]"},
          {"pod_same", "id=9 value=0.5"}};
}

/// The registered names of the types that changed between the builds.
const std::vector<std::string> changed_types{
  "added", "removed", "renamed", "reordered", "widened", "nested", "frozen",
  "pod_widened"};

/// Whether `family` bridges two versions of an evolving type.
bool bridges(const std::string& family) {
  return family == "msgpack" || family == "cereal.json"
         || family == "cereal.binary" || family == "cereal.portable";
}

const char* program(int version) {
  return version == 1 ? FERRY_VERSIONED_NODE_V1 : FERRY_VERSIONED_NODE_V2;
}

/// Reads `p`'s lines until `last` (or the end of its output).
std::vector<std::string> lines_until(child_process& p, const std::string& last) {
  std::vector<std::string> result;
  while (auto line = p.read_line(60s)) {
    if (*line == last)
      break;
    result.push_back(std::move(*line));
  }
  return result;
}

/// How many of `lines` log that type `v.<type>` changed.
size_t logged(const std::vector<std::string>& lines, const std::string& type) {
  size_t n = 0;
  for (auto& line : lines)
    if (line.starts_with("log ")
        && line.find("type \"v." + type + "\" has another shape")
             != std::string::npos)
      ++n;
  return n;
}

class versions
  : public testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(versions, EachValueArrivesAsDocumentedOrIsRefusedBeforeDecoding) {
  // Arrange: the server runs the other build.
  auto [family, sender_version] = GetParam();
  auto server_version = 3 - sender_version;
  child_process server{program(server_version),
                       {"serve", "--ferry.node-name=v"
                                   + std::to_string(server_version)}};
  auto port = server.wait_for("port ");
  ASSERT_TRUE(port) << "the server did not start";
  // Act
  child_process sender{program(sender_version),
                       {"send", *port, family,
                        "--ferry.node-name=v" + std::to_string(sender_version)}};
  auto sent = lines_until(sender, "done");
  EXPECT_TRUE(sender.wait(30s).ok());
  server.close_stdin();
  auto served = lines_until(server, "");
  EXPECT_TRUE(server.wait(30s).ok());
  // Assert
  std::map<std::string, std::string> outcome;
  for (auto& line : sent)
    if (!line.starts_with("log ")) {
      auto space = line.find(' ');
      outcome[line.substr(0, space)] = line.substr(space + 1);
    }
  auto expected = read_bridged(sender_version);
  bool raw = family == "raw";
  size_t checked = 0;
  for (auto& [type, seen] : expected) {
    if (raw && !type.starts_with("pod_"))
      continue;
    bool unchanged = type == "same" || type == "pod_same";
    if (!unchanged && !bridges(family))
      continue;
    ++checked;
    EXPECT_EQ(outcome[type], "got " + seen) << type;
  }
  for (auto& type : changed_types) {
    if (raw && !type.starts_with("pod_"))
      continue;
    bool bridged = bridges(family) && type != "frozen"
                   && type != "pod_widened";
    if (bridged)
      continue;
    ++checked;
    auto& text = outcome[type];
    EXPECT_TRUE(text.starts_with("error type_mismatch ")) << type << ": " << text;
    EXPECT_NE(text.find("type \"v." + type + "\" has another shape on node v"
                        + std::to_string(sender_version)),
              std::string::npos)
      << type << ": " << text;
    EXPECT_NE(text.find("fingerprint"), std::string::npos) << type << ": "
                                                           << text;
    auto why = type == "frozen" || type == "pod_widened"
                 ? "no family bridges the two versions"
                 : "bridge the two versions, and the link sends with none "
                   "of them";
    EXPECT_NE(text.find(why), std::string::npos) << type << ": " << text;
  }
  if (sender_version == 2 && !raw) {
    // A widened value the narrower member cannot hold is refused, never cut.
    ++checked;
    auto& text = outcome["widened_big"];
    EXPECT_TRUE(text.starts_with("error ")) << text;
    if (bridges(family)) {
      EXPECT_EQ(text.find("type_mismatch"), std::string::npos) << text;
    }
  }
  EXPECT_EQ(outcome.size(), checked);
  // Both nodes say, when the link is made, which types changed.
  for (auto& type : changed_types) {
    EXPECT_EQ(logged(sent, type), 1u) << type;
    EXPECT_EQ(logged(served, type), 1u) << type;
  }
}

std::string name_of(
  const testing::TestParamInfo<std::tuple<std::string, int>>& info) {
  auto name = std::get<0>(info.param);
  for (auto& ch : name)
    if (ch == '.')
      ch = '_';
  return name + "_from_v" + std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
  families, versions,
  testing::Combine(testing::Values("cereal.binary", "cereal.portable",
                                   "cereal.json", "msgpack", "caf", "raw"),
                   testing::Values(1, 2)),
  name_of);

} // namespace
