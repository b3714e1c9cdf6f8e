// The ferry-store tool as a user meets it (label `unit`): its help names
// every command, option (with the defaults as they resolve here) and column
// of `list`; a wrong command line fails with exit code 2 and a message naming
// the argument; `list` on a real small store prints exactly the documented
// columns and totals. Each test runs the built tool as a child process.
#include "ferry/store/object_store.hpp"
#include "ferry/store/parked_ref.hpp"
#include "ferry/test/child_process.hpp"

#include "store_test_support.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

using namespace ferry::store;
using namespace ferry::store::test;
using ferry::test::child_process;
using ferry::test::exit_status;

namespace {

/// The columns of `list`, in order, as the help documents them.
const std::vector<std::string> documented_columns{
  "OBJECT ID", "SIZE", "REFS", "STATE", "PINNED", "SPILLED", "HOLDERS"};

/// The figures of `list`'s totals, as the help documents them.
const std::vector<std::string> documented_totals{
  "capacity",        "used",     "pinned",   "largest free block",
  "spilled",         "lock recoveries",      "processes"};

const std::vector<std::string> commands{"list", "reap", "remove", "help"};

struct tool_run {
  exit_status status;
  std::string output;
};

/// Runs ferry-store with `args`; with `merge_stderr` its standard error is
/// read along with its standard output.
tool_run run_tool(std::vector<std::string> args, bool merge_stderr = false) {
  std::string program = FERRY_STORE_TOOL;
  if (merge_stderr) {
    args.insert(args.begin(), {"-c", "exec \"$0\" \"$@\" 2>&1", program});
    program = "/bin/sh";
  }
  child_process tool{program, args};
  tool_run result;
  while (auto line = tool.read_line())
    result.output += *line + "\n";
  result.status = tool.wait();
  return result;
}

/// Returns the line of `text` that starts with `prefix`, or "".
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in{text};
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(prefix))
      return line;
  return {};
}

/// Splits `list`'s header line into its column names (words, "OBJECT ID"
/// one name), up to the legend of HOLDERS.
std::vector<std::string> columns_of(const std::string& header) {
  std::vector<std::string> result;
  std::istringstream in{header};
  for (std::string word; in >> word;) {
    if (word.starts_with("("))
      break; // HOLDERS' legend
    if (!result.empty() && result.back() == "OBJECT" && word == "ID")
      result.back() += " ID";
    else
      result.push_back(word);
  }
  return result;
}

TEST(ferry_store_tool, HelpNamesEveryCommandOptionColumnAndTotal) {
  // Act
  auto sut = run_tool({"--help"});
  // Assert
  ASSERT_TRUE(sut.status.ok()) << to_string(sut.status) << sut.output;
  for (auto& command : commands)
    EXPECT_NE(sut.output.find("\n  " + command + " "), std::string::npos)
      << "command " << command << " undocumented:\n"
      << sut.output;
  EXPECT_NE(sut.output.find("--name NAME"), std::string::npos) << sut.output;
  EXPECT_NE(sut.output.find("--help"), std::string::npos) << sut.output;
  EXPECT_NE(sut.output.find("default: " + store_config::default_name()),
            std::string::npos)
    << sut.output;
  EXPECT_NE(sut.output.find(store_config::default_spill_directory()),
            std::string::npos)
    << sut.output;
  for (auto& column : documented_columns)
    EXPECT_NE(sut.output.find("\n             " + column + " "),
              std::string::npos)
      << "column " << column << " undocumented:\n"
      << sut.output;
  for (auto& total : documented_totals)
    EXPECT_NE(sut.output.find("\n             " + total + " "),
              std::string::npos)
      << "total " << total << " undocumented:\n"
      << sut.output;
  EXPECT_NE(sut.output.find("handles/in-transit/pins/parked"),
            std::string::npos)
    << sut.output;
  EXPECT_NE(sut.output.find("exit status"), std::string::npos) << sut.output;
}

TEST(ferry_store_tool, HelpOfOneCommandDescribesThatCommandOnly) {
  for (auto& args : std::vector<std::vector<std::string>>{
         {"help", "reap"}, {"reap", "--help"}, {"--name", "x", "reap", "-h"}}) {
    // Act
    auto sut = run_tool(args);
    // Assert
    ASSERT_TRUE(sut.status.ok()) << to_string(sut.status) << sut.output;
    EXPECT_TRUE(sut.output.starts_with("usage: ferry-store [--name NAME] reap"))
      << sut.output;
    EXPECT_NE(sut.output.find("\n  reap "), std::string::npos) << sut.output;
    EXPECT_EQ(sut.output.find("\n  list "), std::string::npos) << sut.output;
    EXPECT_EQ(sut.output.find("\n  remove "), std::string::npos) << sut.output;
  }
}

TEST(ferry_store_tool, UnknownCommandFailsWithExitCodeTwoNamingIt) {
  // Act
  auto sut = run_tool({"frobnicate"}, true);
  // Assert
  EXPECT_TRUE(sut.status.exited);
  EXPECT_EQ(sut.status.code, 2) << sut.output;
  EXPECT_NE(sut.output.find("unknown command 'frobnicate'"), std::string::npos)
    << sut.output;
  EXPECT_NE(sut.output.find("list, reap, remove, help"), std::string::npos)
    << sut.output;
  EXPECT_NE(sut.output.find("ferry-store --help"), std::string::npos)
    << sut.output;
}

TEST(ferry_store_tool, WrongArgumentsFailWithExitCodeTwoNamingThem) {
  struct wrong {
    std::vector<std::string> args;
    std::string message;
  };
  for (auto& x : std::vector<wrong>{
         {{"--frob"}, "unknown option '--frob'"},
         {{"help", "frob"}, "unknown command 'frob'"},
         {{"--name"}, "option --name needs a value"},
         {{"--name="}, "option --name needs a value"},
         {{"list", "reap"}, "unexpected argument 'reap' after command 'list'"}}) {
    // Act
    auto sut = run_tool(x.args, true);
    // Assert
    EXPECT_TRUE(sut.status.exited) << x.message;
    EXPECT_EQ(sut.status.code, 2) << x.message << ": " << sut.output;
    EXPECT_NE(sut.output.find(x.message), std::string::npos) << sut.output;
    EXPECT_NE(sut.output.find("ferry-store --help"), std::string::npos)
      << sut.output;
  }
}

TEST(ferry_store_tool, ListOfASmallStorePrintsTheDocumentedColumnsAndTotals) {
  // Arrange: a small store of this test's own with one object held by a
  // handle and one only by a parked reference.
  store_cleanup cleanup{small_config("tool")};
  cleanup.cfg.prefault = false;
  auto store = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(store) << render(store.error());
  auto held = store->put(pattern(4321, 1));
  ASSERT_TRUE(held) << render(held.error());
  auto put = store->put(pattern(999, 2));
  ASSERT_TRUE(put) << render(put.error());
  auto parked = park(*put);
  ASSERT_TRUE(parked) << render(parked.error());
  put->reset();
  // Act
  auto sut = run_tool({"--name", cleanup.cfg.name, "list"});
  // Assert: the header is exactly the documented columns.
  ASSERT_TRUE(sut.status.ok()) << to_string(sut.status) << sut.output;
  EXPECT_EQ(columns_of(line_starting(sut.output, "OBJECT ID")),
            documented_columns)
    << sut.output;
  EXPECT_NE(line_starting(sut.output, "OBJECT ID")
              .find("HOLDERS (pid: handles/in-transit/pins/parked)"),
            std::string::npos)
    << sut.output;
  // One row per object, the columns in the documented order.
  auto me = std::to_string(::getpid());
  std::istringstream row{line_starting(sut.output, to_string(held->id()) + " ")};
  std::string id, size, refs, state, pinned, spilled, holders;
  row >> id >> size >> refs >> state >> pinned >> spilled;
  std::getline(row >> std::ws, holders);
  EXPECT_EQ(size, "4321");
  EXPECT_EQ(refs, "1");
  EXPECT_EQ(state, "sealed");
  EXPECT_EQ(pinned, "no");
  EXPECT_EQ(spilled, "no");
  EXPECT_EQ(holders, me + ": 1/0/0/0");
  std::istringstream parked_row{
    line_starting(sut.output, to_string(parked->id()) + " ")};
  parked_row >> id >> size >> refs >> state >> pinned >> spilled;
  std::getline(parked_row >> std::ws, holders);
  EXPECT_EQ(size, "999");
  EXPECT_EQ(holders, me + ": 0/0/0/1");
  // The totals, each documented figure once.
  for (auto& total : documented_totals)
    EXPECT_TRUE(sut.output.find(total + " ") != std::string::npos
                || sut.output.find(total + ":") != std::string::npos)
      << total << " missing:\n"
      << sut.output;
  EXPECT_NE(sut.output.find("--- store '" + cleanup.cfg.name + "': 2 objects"),
            std::string::npos)
    << sut.output;
  EXPECT_NE(sut.output.find("capacity 1.0 MiB"), std::string::npos)
    << sut.output;
  EXPECT_NE(sut.output.find(" in " + cleanup.cfg.spill_directory + ","),
            std::string::npos)
    << sut.output;
  EXPECT_EQ(line_starting(sut.output, "processes:"), "processes: " + me)
    << sut.output;
}

} // namespace
