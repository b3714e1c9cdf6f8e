// The chaos run's checker: parsing history files and finding each broken
// invariant, on small histories written out here line by line. Each test
// names the one invariant it expects to be reported.
#include "history.hpp"
#include "invariants.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace ferry::chaos;

namespace {

using lines = std::vector<std::string>;

/// Returns a history that exited cleanly: `start`, `body`, `store` with
/// `objects` and `end`; the node's name is the part of `inc` before `-`.
lines clean(const std::string& inc, const lines& body, int objects = 0) {
  lines result{"0 start " + inc.substr(0, inc.find('-')) + " " + inc};
  result.insert(result.end(), body.begin(), body.end());
  result.push_back("90000000 store " + std::to_string(objects));
  result.push_back("90000001 end");
  return result;
}

/// Returns a history that was killed after `body`.
lines killed(const std::string& inc, const lines& body) {
  lines result{"0 start " + inc.substr(0, inc.find('-')) + " " + inc};
  result.insert(result.end(), body.begin(), body.end());
  return result;
}

/// Parses `xs` as file `file`, each line ending in a newline except,
/// unless `newline_at_end`, the last.
history parse_file(const std::string& file, const lines& xs,
                   std::vector<violation>& problems,
                   bool newline_at_end = true) {
  std::string text;
  for (size_t i = 0; i < xs.size(); ++i)
    text += xs[i] + (i + 1 < xs.size() || newline_at_end ? "\n" : "");
  std::istringstream in{text};
  return parse_history(in, file, problems);
}

/// Parses the files (`h1.history`, `h2.history`, ...) and returns their
/// parse problems followed by what `check` finds.
std::vector<violation> check_files(const std::vector<lines>& files) {
  std::vector<violation> found;
  std::vector<history> histories;
  for (size_t i = 0; i < files.size(); ++i)
    histories.push_back(
      parse_file("h" + std::to_string(i + 1) + ".history", files[i], found));
  for (auto& v : check(histories))
    found.push_back(v);
  return found;
}

/// Returns the invariant ids of `found`, in order.
lines ids(const std::vector<violation>& found) {
  lines result;
  for (auto& v : found)
    result.push_back(v.invariant);
  return result;
}

bool says(const violation& v, const std::string& text) {
  return v.what.find(text) != std::string::npos;
}

/// Three incarnations: n1 and n2 exit cleanly, n3 is killed. Requests are
/// answered with values and typed errors, one-way tails are lost after
/// `down` or from the killed sender, monitors fire once after each `down`.
std::vector<lines> clean_run() {
  return {
    clean("n1-1", {"1000 link n2 e12",
                   "1010 link n3 e13",
                   "1100 req 1 call n2 e12 5000 42",
                   "1200 ans 1 ok 42",
                   "1300 req 2 relay n2 e12 10000 43",
                   "1400 ans 2 err request_timeout relay gave up",
                   "1500 req 3 local-object - - 30000 7",
                   "1600 ans 3 ok 7",
                   "1700 req 4 object n3 e13 30000 9",
                   "2000 send n2 e12 1",
                   "2001 send n2 e12 2",
                   "2002 send n2 e12 3",
                   "2003 send n2 e12 4",
                   "2100 got n3-3 e13 1 ok",
                   "2500 fill 1048576",
                   "2600 unfill",
                   "2700 serve n2-2 1",
                   "3000 down n2 connection lost",
                   "3100 mon e12 down lost",
                   "3101 mon e12 exit lost",
                   "3200 down n3 connection lost",
                   "3300 mon e13 down lost",
                   "3301 mon e13 exit lost",
                   "3400 ans 4 err node_down n3",
                   "4000 rss warm 50000",
                   "8000 rss end 59000",
                   "8500 note the workload ended"}),
    clean("n2-2",
          {"1000 link n1 e12", "1150 serve n1-1 1", "2100 got n1-1 e12 1 ok",
           "2101 got n1-1 e12 2 ok", "2600 req 1 call n1 e12 5000 77",
           "2800 ans 1 ok 77", "3000 down n1 connection lost",
           "3100 mon e12 down lost", "3101 mon e12 exit lost"}),
    killed("n3-3", {"1010 link n1 e13", "1050 send n1 e13 1",
                    "1060 send n1 e13 2", "1900 req 1 call n1 e13 5000 5"}),
  };
}

/// n1 sends one-way messages 1..`sent` to n2 on e12 and n2 receives
/// `got` (`<seq> <ok|bad>` each); both exit cleanly unless told otherwise.
std::vector<lines> stream(int sent, const lines& got, lines n1_after = {},
                          bool n2_killed = false) {
  lines n1{"1000 link n2 e12"};
  for (int seq = 1; seq <= sent; ++seq)
    n1.push_back("2000 send n2 e12 " + std::to_string(seq));
  n1.insert(n1.end(), n1_after.begin(), n1_after.end());
  lines n2{"1000 link n1 e12"};
  for (auto& x : got)
    n2.push_back("3000 got n1-1 e12 " + x);
  return {clean("n1-1", n1),
          n2_killed ? killed("n2-2", n2) : clean("n2-2", n2)};
}

} // namespace

TEST(chaos_invariants, ACleanRunHasNoViolations) {
  // Arrange
  auto files = clean_run();
  // Act
  auto found = check_files(files);
  // Assert
  std::string report;
  for (auto& v : found)
    report += render(v) + "\n";
  EXPECT_EQ(ids(found), lines{}) << report;
}

TEST(chaos_invariants, ARequestAnsweredTwiceIsAViolation) {
  auto files = {clean("n1-1", {"100 req 7 call n2 e12 5000 42",
                               "200 ans 7 ok 42", "300 ans 7 ok 42"})};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"answered-once"});
  EXPECT_TRUE(says(found[0], "n1-1 request 7 (call to n2 on epoch e12)"));
  EXPECT_TRUE(says(found[0], "answered 2 times"));
  EXPECT_EQ(found[0].lines.size(), 3u);
}

TEST(chaos_invariants, ARequestACleanIncarnationNeverAnsweredIsAViolation) {
  auto files = {clean("n1-1", {"100 req 7 call n2 e12 5000 42"})};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"answered-once"});
  EXPECT_TRUE(says(found[0], "never answered"));
}

TEST(chaos_invariants, AnAnswerWithoutARequestIsAViolation) {
  auto files = {clean("n1-1", {"200 ans 7 ok 42"})};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"answered-once"});
  EXPECT_TRUE(says(found[0], "never sent"));
}

TEST(chaos_invariants, ARequestIdSentTwiceIsAViolation) {
  auto files = {
    clean("n1-1", {"100 req 7 call n2 e12 5000 42",
                   "150 req 7 call n2 e12 5000 42", "200 ans 7 ok 42"})};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"answered-once"});
  EXPECT_TRUE(says(found[0], "sent request 7 twice"));
}

TEST(chaos_invariants, AnAnswerPastItsTimeoutAndSlackIsAViolation) {
  // Arrange: 5000 ms timeout plus 2000 ms slack; n2 answers just in time.
  auto files = {
    clean("n1-1", {"1000 req 7 call n2 e12 5000 42", "7001001 ans 7 ok 42"}),
    clean("n2-2", {"1000 req 7 call n1 e12 5000 42", "7001000 ans 7 ok 42"})};
  // Act
  auto found = check_files(files);
  // Assert
  ASSERT_EQ(ids(found), lines{"within-timeout"});
  EXPECT_TRUE(says(found[0], "n1-1 request 7"));
  EXPECT_TRUE(says(found[0], "after 7000.001 ms"));
}

TEST(chaos_invariants, TimeTheRequesterSpentStoppedDoesNotCountAgainstItsTimeout) {
  // Arrange: n1 was stopped for 5 s while waiting; 12 s in all, 7 s awake.
  std::vector<violation> found;
  std::vector<history> histories{parse_file(
    "h1.history",
    clean("n1-1", {"1000 req 7 call n2 e12 5000 42", "12001000 ans 7 ok 42"}),
    found)};
  check_options options;
  options.paused["n1-1"] = {{2000000, 7000000}};
  // Act
  auto awake = check(histories, options);
  options.paused["n1-1"] = {{2000000, 6000000}};
  auto one_second_short = check(histories, options);
  // Assert
  EXPECT_TRUE(found.empty());
  EXPECT_EQ(ids(awake), lines{});
  EXPECT_EQ(ids(one_second_short), lines{"within-timeout"});
}

TEST(chaos_invariants, AnErrorWithoutATypedReasonIsAViolation) {
  auto files = {clean(
    "n1-1", {"100 req 1 call n2 e12 5000 1", "101 ans 1 err",
             "200 req 2 call n2 e12 5000 2", "201 ans 2 err none",
             "300 req 3 call n2 e12 5000 3", "301 ans 3 err unknown",
             "400 req 4 call n2 e12 5000 4", "401 ans 4 err request_timeout"})};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), (lines{"typed-error", "typed-error", "typed-error"}));
  EXPECT_TRUE(says(found[0], "without a reason"));
  EXPECT_TRUE(says(found[1], "`none`"));
}

TEST(chaos_invariants, AnAnswerWithTheWrongChecksumIsAViolation) {
  auto files = {
    clean("n1-1", {"100 req 7 object n2 e12 30000 42", "200 ans 7 ok 41"})};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"checksum"});
  EXPECT_TRUE(says(found[0], "checksum 41, not the 42"));
}

TEST(chaos_invariants, AOneWayMessageWithABadPayloadIsAViolation) {
  auto files = stream(2, {"1 ok", "2 bad"});
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"checksum"});
  EXPECT_TRUE(says(found[0], "one-way message 2 of n1-1 on epoch e12"));
}

TEST(chaos_invariants, ARequestServedTwiceIsAViolation) {
  // Arrange: n1's request 7, relayed through n3, reached n2 twice.
  auto files = {
    clean("n1-1", {"100 req 7 relay n3 e13 10000 42", "300 ans 7 ok 42"}),
    clean("n2-2", {"200 serve n1-1 7", "250 serve n1-1 7"})};
  // Act
  auto found = check_files(files);
  // Assert
  ASSERT_EQ(ids(found), lines{"no-duplicates"});
  EXPECT_TRUE(says(found[0], "n1-1 request 7 (relay to n3 on epoch e13) "
                             "was served 2 times"));
  ASSERT_EQ(found[0].lines.size(), 3u);
  EXPECT_EQ(found[0].lines[0], "h1.history:2: 100 req 7 relay n3 e13 10000 42");
}

TEST(chaos_invariants, AOneWayMessageDeliveredTwiceIsAViolation) {
  auto files = stream(2, {"1 ok", "1 ok", "2 ok"});
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"no-duplicates"});
  EXPECT_TRUE(says(found[0], "message 1 of n1-1 on epoch e12 arrived 2 times"));
}

TEST(chaos_invariants, OneWayMessagesOutOfOrderAreAViolation) {
  auto files = stream(3, {"1 ok", "3 ok", "2 ok"});
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"per-pair-order"});
  EXPECT_TRUE(says(found[0], "message 2 of n1-1 on epoch e12 after message 3"));
}

TEST(chaos_invariants, AGapInTheMiddleOfAStreamIsAViolation) {
  auto files = stream(5, {"1 ok", "4 ok", "5 ok"});
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"per-pair-order"});
  EXPECT_TRUE(says(found[0], "messages 2 to 3 (2) of n1-1 to n2 on epoch e12 "
                             "never arrived at n2-2, though the later "
                             "message 4 did"));
  EXPECT_EQ(found[0].lines.size(), 4u);
}

TEST(chaos_invariants, AMessageNeverSentIsAViolation) {
  auto files = stream(1, {"1 ok", "2 ok"});
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"per-pair-order"});
  EXPECT_TRUE(says(found[0], "which n1-1 never sent"));
}

TEST(chaos_invariants, AMessagePastTheLastSendLineOfAKilledSenderIsTolerated) {
  // Arrange: n1 was killed while logging that it sent message 2.
  std::vector<lines> files{
    killed("n1-1", {"1000 link n2 e12", "2000 send n2 e12 1"}),
    clean("n2-2", {"1000 link n1 e12", "3000 got n1-1 e12 1 ok",
                   "3001 got n1-1 e12 2 ok"})};
  // Act
  auto found = check_files(files);
  // Assert
  EXPECT_EQ(ids(found), lines{});
}

TEST(chaos_invariants, ALostTailWithoutTheEpochEndingIsAViolation) {
  auto files = stream(3, {"1 ok"});
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"per-pair-order"});
  EXPECT_TRUE(says(found[0], "messages 2 to 3 (2)"));
  EXPECT_TRUE(says(found[0], "logged no `down n2`"));
}

TEST(chaos_invariants, ALostTailIsAllowedAfterTheSenderLoggedDown) {
  auto files = stream(3, {"1 ok"},
                      {"4000 down n2 connection lost", "4100 mon e12 down x",
                       "4101 mon e12 exit x"});
  auto found = check_files(files);
  EXPECT_EQ(ids(found), lines{});
}

TEST(chaos_invariants, AMessageSentAfterTheLinkWentDownMayBeLost) {
  auto files = stream(1, {"1 ok"},
                      {"4000 down n2 connection lost", "4050 send n2 e12 2",
                       "4100 mon e12 down x", "4101 mon e12 exit x"});
  auto found = check_files(files);
  EXPECT_EQ(ids(found), lines{});
}

TEST(chaos_invariants, ALostTailIsAllowedWhenTheReceiverDied) {
  auto files = stream(3, {"1 ok"}, {}, true);
  auto found = check_files(files);
  EXPECT_EQ(ids(found), lines{});
}

TEST(chaos_invariants, AMonitorThatFiredTwiceIsAViolation) {
  auto files = {clean("n1-1", {"1000 link n2 e12", "2000 mon e12 down x",
                               "2001 mon e12 down x"})};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"monitors"});
  EXPECT_TRUE(says(found[0], "received 2 down messages"));
}

TEST(chaos_invariants, AMonitorMissingAfterDownIsAViolation) {
  auto files = {clean("n1-1", {"1000 link n2 e12", "2000 down n2 lost",
                               "2100 mon e12 down lost"}),
                killed("n3-3", {"1000 link n4 e34", "2000 down n4 lost"})};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"monitors"});
  EXPECT_TRUE(says(found[0], "n1-1 exited cleanly after its link to n2 on "
                             "epoch e12 went down, but its linked actor "
                             "received no exit message"));
}

TEST(chaos_invariants, AMonitorMessageForAnEpochNeverLinkedIsAViolation) {
  auto files = {clean("n1-1", {"2000 mon e99 exit x"})};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"monitors"});
  EXPECT_TRUE(says(found[0], "never linked"));
}

TEST(chaos_invariants, AStoreNotDrainedIsAViolation) {
  auto files = {clean("n1-1", {}, 3),
                lines{"0 start n2 n2-2", "100 rss warm 10", "200 end"}};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), (lines{"store-drains", "store-drains"}));
  EXPECT_TRUE(says(found[0], "n1-1's store held 3 objects"));
  EXPECT_TRUE(says(found[1], "n2-2 exited cleanly without logging"));
}

TEST(chaos_invariants, ResidentMemoryGrowingPastTheFactorIsAViolation) {
  auto files = {clean("n1-1", {"100 rss warm 50000", "200 rss end 60001"}),
                clean("n2-2", {"100 rss warm 50000", "200 rss end 60000"})};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"rss"});
  EXPECT_TRUE(says(found[0], "n1-1's resident memory grew from 50000 KiB"));
  EXPECT_TRUE(says(found[0], "to 60001 KiB"));
}

TEST(chaos_invariants, AMalformedLineInTheMiddleIsAHistoryViolation) {
  auto files = {killed(
    "n1-1", {"100 req 7 call n2 e12 soon 42", "200 note still running"})};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"history"});
  EXPECT_TRUE(says(found[0], "h1.history line 2"));
  EXPECT_TRUE(says(found[0], "`timeout_ms` is `soon`"));
  EXPECT_EQ(found[0].lines,
            lines{"h1.history:2: 100 req 7 call n2 e12 soon 42"});
}

TEST(chaos_invariants, AnUnknownEventIsAHistoryViolation) {
  auto files = {clean("n1-1", {"100 teleport n2"})};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"history"});
  EXPECT_TRUE(says(found[0], "unknown event `teleport`"));
}

TEST(chaos_invariants, ATruncatedLastLineOfAKilledIncarnationIsTolerated) {
  // Arrange: one history cut inside a word, one cut inside a number.
  lines cut_word = killed("n1-1", {"100 req 7 call n2 e12 5000 42", "200 an"});
  lines cut_number =
    killed("n2-2", {"100 req 7 call n1 e12 5000 42", "200 ans 7 ok 4"});
  std::vector<violation> problems;
  // Act
  std::vector<history> histories{
    parse_file("h1.history", cut_word, problems, false),
    parse_file("h2.history", cut_number, problems, false)};
  auto found = check(histories);
  // Assert
  EXPECT_EQ(ids(problems), lines{});
  EXPECT_EQ(ids(found), lines{});
  EXPECT_EQ(histories[1].events.size(), 2u);
}

TEST(chaos_invariants, AFileThatCannotBeReadIsAHistoryViolation) {
  std::ifstream in{"/nonexistent/n1-1.history"};
  std::vector<violation> problems;
  auto sut = parse_history(in, "n1-1.history", problems);
  ASSERT_EQ(ids(problems), lines{"history"});
  EXPECT_TRUE(says(problems[0], "n1-1.history could not be read"));
  EXPECT_TRUE(sut.events.empty());
}

TEST(chaos_invariants, ALineAfterEndIsAHistoryViolation) {
  auto file = clean("n1-1", {});
  file.push_back("90000002 garbage");
  auto found = check_files({file});
  ASSERT_EQ(ids(found), lines{"history"});
  EXPECT_TRUE(says(found[0], "line 4"));
}

TEST(chaos_invariants, AHistoryThatDoesNotOpenWithStartIsAViolation) {
  auto files = {lines{"100 note hello", "200 store 0", "300 end"}};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"history"});
  EXPECT_TRUE(says(found[0], "does not open with `start`"));
}

TEST(chaos_invariants, TimeRunningBackwardsIsAHistoryViolation) {
  auto files = {clean("n1-1", {"200 note later", "100 note earlier"})};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"history"});
  EXPECT_TRUE(says(found[0], "from 200 to 100"));
}

TEST(chaos_invariants, TwoHistoriesOfOneIncarnationAreAViolation) {
  auto files = {clean("n1-1", {}), clean("n1-1", {})};
  auto found = check_files(files);
  ASSERT_EQ(ids(found), lines{"history"});
  EXPECT_TRUE(says(found[0], "n1-1 has two histories"));
}

TEST(chaos_invariants, RenderShowsTheInvariantTheSentenceAndEachLine) {
  violation sut{"rss",
                "n1-1 grew",
                {"h1.history:2: 1 rss warm 1", "h1.history:3: 2 rss end 9"}};
  auto text = render(sut);
  EXPECT_EQ(text, "[rss] n1-1 grew\n"
                  "    h1.history:2: 1 rss warm 1\n"
                  "    h1.history:3: 2 rss end 9");
}

TEST(chaos_invariants, SummaryCountsWhatTheRunDid) {
  std::vector<violation> problems;
  std::vector<history> histories;
  for (auto& file : clean_run())
    histories.push_back(parse_file("h.history", file, problems));
  auto sut = summarize(histories);
  EXPECT_EQ(sut.requests, 6u);
  EXPECT_EQ(sut.answers_ok, 3u);
  EXPECT_EQ(sut.answers_err, 2u);
  EXPECT_EQ(sut.one_way_sent, 6u);
  EXPECT_EQ(sut.one_way_got, 3u);
  EXPECT_EQ(sut.objects, 2u);
  EXPECT_EQ(sut.epochs, 2u);
  EXPECT_EQ(sut.incarnations, 3u);
  EXPECT_EQ(sut.killed, 1u);
  EXPECT_EQ(sut.link_ends, 3u);
  EXPECT_EQ(sut.watch_messages, 6u);
  EXPECT_DOUBLE_EQ(sut.rss_ratio, 59000.0 / 50000.0);
  EXPECT_EQ(render_errors(sut), "node_down 1, request_timeout 1");
}
