// The chaos run's entity invariants (entity_checks.hpp) on small histories
// written out here line by line: a clean run has none, and each test breaks
// one invariant and expects exactly it to be reported.
#include "entity_checks.hpp"
#include "history.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

using namespace ferry::chaos;

namespace {

using lines = std::vector<std::string>;

/// Two members (e1 killed, e2 clean) and the checker: e1's activation of a1
/// applies e1's op 1 and is killed; e2's takes a1 over, applies e2's ops 1
/// and 2 to a1 and a2; a paused activation of a2 on e1 began late and
/// applied nothing. `changes` replaces lines by their index in the
/// concatenation of the three files.
std::vector<lines> run(const std::vector<std::pair<size_t, std::string>>&
                         changes = {}) {
  std::vector<lines> files{
    {"0 start e1 e1-1", "10 eop e1-1/1 a1", "20 act a1 e1-1/a1",
     "30 apply e1-1/a1 e1-1/1", "40 eack e1-1/1", "900 act a2 e1-1/a2"},
    {"0 start e2 e2-1", "100 eop e2-1/1 a1", "110 act a1 e2-1/a1",
     "120 apply e2-1/a1 e2-1/1", "130 eack e2-1/1", "140 eop e2-1/2 a2",
     "150 act a2 e2-1/a2", "160 apply e2-1/a2 e2-1/2",
     "170 eerr e2-1/2 ferry_fw: request_timeout", "180 eack e2-1/2",
     "190 deact e2-1/a1", "200 deact e2-1/a2", "210 end"},
    {"0 start check1 check1-1", "300 estate a1 2 e1-1/1 e2-1/1",
     "310 estate a2 1 e2-1/2", "320 end"},
  };
  for (auto& [at, text] : changes) {
    size_t i = at;
    for (auto& f : files) {
      if (i < f.size()) {
        f[i] = text;
        break;
      }
      i -= f.size();
    }
  }
  return files;
}

/// Parses the files and returns the parse problems, then what
/// check_entities finds.
std::vector<violation> check_run(const std::vector<lines>& files) {
  std::vector<violation> found;
  std::vector<history> histories;
  for (size_t i = 0; i < files.size(); ++i) {
    std::string text;
    for (auto& line : files[i])
      text += line + "\n";
    std::istringstream in{text};
    histories.push_back(
      parse_history(in, "e" + std::to_string(i + 1) + ".ehistory", found));
  }
  for (auto& v : check_entities(histories))
    found.push_back(v);
  return found;
}

lines ids(const std::vector<violation>& found) {
  lines result;
  for (auto& v : found)
    result.push_back(v.invariant + ": " + v.what);
  return result;
}

} // namespace

TEST(chaos_entity_invariants, ACleanRunHasNoViolations) {
  EXPECT_EQ(ids(check_run(run())), lines{});
}

TEST(chaos_entity_invariants, TwoActivationsApplyingAtOnceAreAViolation) {
  // e1's activation of a1 applies once more, after e2's began applying.
  auto files = run();
  files[0].push_back("950 apply e1-1/a1 e1-1/9");
  auto found = check_run(files);
  ASSERT_EQ(found.size(), 1u) << ids(found)[0];
  EXPECT_EQ(found[0].invariant, "single-activation");
  EXPECT_NE(found[0].what.find("account a1"), std::string::npos);
}

TEST(chaos_entity_invariants, AnAcknowledgedOperationNotStoredIsAViolation) {
  // a1's stored state lost e1-1/1, which was acknowledged.
  auto found = check_run(run({{20, "300 estate a1 1 e2-1/1"}}));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].invariant, "acknowledged-saves-durable");
  EXPECT_NE(found[0].what.find("e1-1/1"), std::string::npos);
}

TEST(chaos_entity_invariants, AnAccountNotReadAtTheEndIsAViolation) {
  auto found = check_run(run({{21, "310 note a2 unread"}}));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].invariant, "acknowledged-saves-durable");
  EXPECT_NE(found[0].what.find("a2"), std::string::npos);
}

TEST(chaos_entity_invariants, AnOperationStoredTwiceIsAViolation) {
  auto found = check_run(run({{21, "310 estate a2 2 e2-1/2 e2-1/2"}}));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].invariant, "no-double-apply");
}

TEST(chaos_entity_invariants, AnOperationStoredInAnotherAccountIsAViolation) {
  auto found = check_run(run({{21, "310 estate a2 2 e2-1/2 e1-1/1"}}));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].invariant, "no-double-apply");
  EXPECT_NE(found[0].what.find("sent to a1"), std::string::npos);
}

TEST(chaos_entity_invariants, OperationsStoredOutOfOrderAreAViolation) {
  // e2's op 2 went to a1 as well, and is stored before its op 1.
  auto found = check_run(run({{11, "140 eop e2-1/2 a1"},
                              {20, "300 estate a1 3 e1-1/1 e2-1/2 e2-1/1"},
                              {21, "310 estate a2 0"}}));
  ASSERT_EQ(found.size(), 1u) << ids(found)[0];
  EXPECT_EQ(found[0].invariant, "entity-order");
}

TEST(chaos_entity_invariants, AnApplyOfAnActivationThatNeverBeganIsAViolation) {
  auto files = run();
  files[1].insert(files[1].begin() + 12, "205 apply e2-1/a9 e2-1/2");
  auto found = check_run(files);
  ASSERT_EQ(found.size(), 1u) << ids(found)[0];
  EXPECT_EQ(found[0].invariant, "history");
}

TEST(chaos_entity_invariants, SummaryCountsWhatTheWorkloadDid) {
  std::vector<violation> problems;
  std::vector<history> histories;
  for (auto& file : run()) {
    std::string text;
    for (auto& line : file)
      text += line + "\n";
    std::istringstream in{text};
    histories.push_back(parse_history(in, "x.ehistory", problems));
  }
  auto sut = summarize_entities(histories);
  EXPECT_EQ(sut.ops, 3u);
  EXPECT_EQ(sut.acked, 3u);
  EXPECT_EQ(sut.failed_calls, 1u);
  EXPECT_EQ(sut.activations, 4u);
  EXPECT_EQ(sut.applies, 3u);
  EXPECT_EQ(sut.accounts_read, 2u);
  EXPECT_EQ(sut.stored, 3u);
}
