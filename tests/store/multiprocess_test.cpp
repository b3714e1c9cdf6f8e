// Multi-process tests with real child processes (label `integration`):
// counts across processes, and crash safety under kill -9 while holding
// handles, while inside `create` (holding the store lock), with an unsealed
// builder, and with a ticket in transit; a process in another PID
// namespace is refused.
#include "ferry/store/log.hpp"
#include "ferry/store/object_store.hpp"
#include "ferry/test/eventually.hpp"
#include "ferry/test/child_process.hpp"

#include "process_identity.hpp"
#include "store_test_support.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <sstream>
#include <thread>

using namespace ferry::store;
using namespace ferry::store::test;
using ferry::test::child_process;

namespace {

class multiprocess_test : public ::testing::Test {
protected:
  void SetUp() override {
    cleanup.cfg = small_config("mp");
    auto attached = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(attached) << render(attached.error());
    sut = std::move(*attached);
  }

  std::unique_ptr<child_process> start_peer() {
    auto peer = std::make_unique<child_process>(
      FERRY_STORE_PEER, std::vector<std::string>{cleanup.cfg.name});
    auto ready = peer->wait_for("ready ");
    EXPECT_TRUE(ready) << "peer did not start";
    return peer;
  }

  /// Sends `command` and returns the answer line.
  static std::string ask(child_process& peer, const std::string& command) {
    peer.write_line(command);
    auto line = peer.read_line();
    return line ? *line : std::string{"<no answer>"};
  }

  static void kill_and_wait(child_process& peer) {
    peer.kill(SIGKILL);
    auto status = peer.wait();
    EXPECT_FALSE(status.exited);
  }

  std::vector<holder_info> holders_of(object_id id) {
    auto summary = sut.memory_summary();
    EXPECT_TRUE(summary);
    if (summary)
      for (auto& obj : summary->objects)
        if (obj.id == id)
          return obj.holders;
    return {};
  }

  store_cleanup cleanup;
  object_store sut;
};

TEST_F(multiprocess_test, CountsAddUpAcrossProcesses) {
  auto ref = sut.put(pattern(5000, 7));
  ASSERT_TRUE(ref);
  auto peer = start_peer();
  auto id = to_string(ref->id());
  EXPECT_EQ(ask(*peer, "get " + id),
            "got " + id + " " + std::to_string(checksum(ref->bytes())));
  EXPECT_EQ(ask(*peer, "get " + id).substr(0, 3), "got");
  EXPECT_EQ(ref->ref_count(), 3u);
  EXPECT_EQ(ask(*peer, "count " + id), "count 3");
  auto holders = holders_of(ref->id());
  ASSERT_EQ(holders.size(), 2u);
  // The last drop anywhere frees the object.
  ref->reset();
  EXPECT_EQ(ask(*peer, "count " + id), "count 2");
  EXPECT_EQ(ask(*peer, "drop " + id), "dropped 2");
  auto gone = sut.get(object_id{std::stoull(id)});
  ASSERT_FALSE(gone);
  EXPECT_EQ(code_of(gone.error()), errc::object_not_found);
  peer->close_stdin();
  EXPECT_TRUE(peer->wait().ok());
}

TEST_F(multiprocess_test, ObjectPutByAChildIsReadInPlaceByTheParent) {
  auto peer = start_peer();
  auto answer = ask(*peer, "put 100000 3");
  ASSERT_EQ(answer.substr(0, 4), "put ") << answer;
  auto id = object_id{std::stoull(answer.substr(4))};
  auto ref = sut.get(id);
  ASSERT_TRUE(ref) << render(ref.error());
  EXPECT_EQ(checksum(ref->bytes()), checksum(pattern(100000, 3)));
  peer->close_stdin();
  EXPECT_TRUE(peer->wait().ok());
  // The child exited normally: its handle is gone, ours remains.
  EXPECT_EQ(ref->ref_count(), 1u);
}

TEST_F(multiprocess_test, HandlesOfAKilledProcessAreReclaimed) {
  auto ours = sut.put(pattern(1000, 1));
  ASSERT_TRUE(ours);
  auto peer = start_peer();
  auto id = to_string(ours->id());
  ASSERT_EQ(ask(*peer, "get " + id).substr(0, 3), "got");
  auto answer = ask(*peer, "put 20000 2");
  ASSERT_EQ(answer.substr(0, 4), "put ") << answer;
  auto theirs = object_id{std::stoull(answer.substr(4))};
  EXPECT_EQ(ours->ref_count(), 2u);
  kill_and_wait(*peer);
  auto reaped = sut.reap();
  ASSERT_TRUE(reaped);
  EXPECT_EQ(*reaped, 1u);
  EXPECT_EQ(ours->ref_count(), 1u);
  EXPECT_FALSE(sut.get(theirs));
  auto summary = sut.memory_summary();
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->objects.size(), 1u);
  EXPECT_EQ(summary->processes.size(), 1u);
  EXPECT_EQ(summary->bytes_used, 1088u);
}

TEST_F(multiprocess_test, ParkedReferencesOfAKilledProcessAreReclaimed) {
  auto ours = sut.put(pattern(1000, 1));
  ASSERT_TRUE(ours);
  auto peer = start_peer();
  auto id = to_string(ours->id());
  ASSERT_EQ(ask(*peer, "park " + id), "parked " + id);
  ASSERT_EQ(ours->ref_count(), 2u);
  auto summary = sut.memory_summary();
  ASSERT_TRUE(summary);
  ASSERT_EQ(summary->objects.size(), 1u);
  auto& holders = summary->objects[0].holders;
  ASSERT_EQ(holders.size(), 2u);
  EXPECT_EQ(holders[0].parked + holders[1].parked, 1u);
  kill_and_wait(*peer);
  auto reaped = sut.reap();
  ASSERT_TRUE(reaped);
  EXPECT_EQ(*reaped, 1u);
  EXPECT_EQ(ours->ref_count(), 1u);
}

TEST_F(multiprocess_test, KilledProcessIsReapedBeforeItsParentWaits) {
  auto peer = start_peer();
  auto answer = ask(*peer, "put 20000 2");
  ASSERT_EQ(answer.substr(0, 4), "put ") << answer;
  peer->kill(SIGKILL);
  // Wait (no timing) until the child is a zombie: dead but not yet waited.
  for (;;) {
    char state = 0;
    uint64_t start = 0;
    ASSERT_TRUE(ferry::store::detail::read_process_stat(peer->pid(), state,
                                                        start));
    if (state == 'Z')
      break;
    std::this_thread::yield();
  }
  auto reaped = sut.reap();
  ASSERT_TRUE(reaped);
  EXPECT_EQ(*reaped, 1u);
  auto summary = sut.memory_summary();
  ASSERT_TRUE(summary);
  EXPECT_TRUE(summary->objects.empty());
  peer->wait();
}

TEST_F(multiprocess_test, AttachOfAnotherProcessReapsTheDead) {
  auto peer = start_peer();
  auto answer = ask(*peer, "put 20000 2");
  ASSERT_EQ(answer.substr(0, 4), "put ") << answer;
  kill_and_wait(*peer);
  auto second = start_peer(); // its attach runs the reaper
  auto summary = sut.memory_summary();
  ASSERT_TRUE(summary);
  EXPECT_TRUE(summary->objects.empty());
  EXPECT_EQ(summary->processes.size(), 2u);
  second->close_stdin();
  EXPECT_TRUE(second->wait().ok());
}

TEST_F(multiprocess_test, KillInsideCreateDoesNotWedgeOthers) {
  auto before = sut.put(pattern(3000, 4));
  ASSERT_TRUE(before);
  auto peer = start_peer();
  peer->write_line("hang-in-create 50000");
  ASSERT_EQ(peer->read_line(), std::optional<std::string>{"in-create"});
  // The child now holds the store lock, inside create.
  kill_and_wait(*peer);
  auto after = sut.put(pattern(3000, 5)); // takes the abandoned lock
  ASSERT_TRUE(after) << render(after.error());
  EXPECT_EQ(checksum(before->bytes()), checksum(pattern(3000, 4)));
  auto summary = sut.memory_summary();
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->recoveries, 1u);
  EXPECT_EQ(summary->objects.size(), 2u); // the child's object is gone
  EXPECT_EQ(summary->processes.size(), 1u);
  EXPECT_EQ(summary->bytes_used, 2u * 3072u);
  // The allocator works normally after the repair.
  std::vector<object_ref> fill;
  for (;;) {
    auto ref = sut.put(pattern(50000, 1));
    if (!ref)
      break;
    fill.push_back(std::move(*ref));
  }
  EXPECT_EQ(fill.size(), (cleanup.cfg.capacity - 2 * 3072) / 50048);
}

TEST_F(multiprocess_test, SpillIoRunsWithoutTheLockAndSurvivesAKill) {
  // Object a is referenced only by a ticket: it is what the child spills.
  auto a = sut.put(pattern(600 * 1024, 1));
  ASSERT_TRUE(a);
  auto ticket = a->export_in_band();
  ASSERT_TRUE(ticket);
  a->reset();
  auto small = sut.put(pattern(1000, 2));
  ASSERT_TRUE(small);
  auto peer = start_peer();
  ASSERT_EQ(ask(*peer, "hang-in-io"), "armed");
  peer->write_line("put 500000 3"); // needs a's memory: spills a
  ASSERT_EQ(peer->read_line(), std::optional<std::string>{"in-io"});
  // The child is inside the spill I/O; the store is not locked meanwhile.
  auto during = sut.get(small->id());
  ASSERT_TRUE(during) << render(during.error());
  auto other = sut.put(pattern(1000, 4));
  ASSERT_TRUE(other) << render(other.error());
  kill_and_wait(*peer);
  ASSERT_TRUE(sut.reap());
  // a stays in memory, intact; no spill file is left behind.
  auto summary = sut.memory_summary();
  ASSERT_TRUE(summary);
  EXPECT_FALSE(summary->objects[0].spilled);
  EXPECT_EQ(summary->bytes_spilled, 0u);
  auto redeemed = sut.redeem(*ticket);
  ASSERT_TRUE(redeemed) << render(redeemed.error());
  EXPECT_EQ(checksum(redeemed->bytes()), checksum(pattern(600 * 1024, 1)));
  std::error_code ec;
  EXPECT_TRUE(std::filesystem::is_empty(cleanup.cfg.spill_directory, ec)
              || ec);
}

TEST_F(multiprocess_test, RestoreIoOfAKilledProcessIsRolledBack) {
  // a is referenced only by a ticket; b's put spills it; then b goes.
  auto a_ref = sut.put(pattern(600 * 1024, 1));
  ASSERT_TRUE(a_ref);
  auto a = a_ref->export_in_band();
  ASSERT_TRUE(a);
  a_ref->reset();
  {
    auto b = sut.put(pattern(600 * 1024, 2));
    ASSERT_TRUE(b) << render(b.error());
  }
  auto summary = sut.memory_summary();
  ASSERT_TRUE(summary);
  ASSERT_EQ(summary->objects.size(), 1u);
  ASSERT_TRUE(summary->objects[0].spilled);
  // The child restores a and hangs in the read, holding no lock.
  auto peer = start_peer();
  ASSERT_EQ(ask(*peer, "hang-in-io"), "armed");
  peer->write_line("get " + to_string(a->object));
  ASSERT_EQ(peer->read_line(), std::optional<std::string>{"in-io"});
  auto other = sut.put(pattern(1000, 4));
  ASSERT_TRUE(other) << render(other.error());
  kill_and_wait(*peer);
  ASSERT_TRUE(sut.reap());
  summary = sut.memory_summary();
  ASSERT_TRUE(summary);
  ASSERT_EQ(summary->objects.size(), 2u);
  EXPECT_TRUE(summary->objects[0].spilled);
  EXPECT_EQ(summary->bytes_used, 1088u); // the half-restored block is free
  auto ra = sut.redeem(*a);
  ASSERT_TRUE(ra) << render(ra.error());
  EXPECT_EQ(checksum(ra->bytes()), checksum(pattern(600 * 1024, 1)));
}

TEST_F(multiprocess_test, UnsealedBuilderOfAKilledProcessIsFreed) {
  auto peer = start_peer();
  auto answer = ask(*peer, "create 70000");
  ASSERT_EQ(answer.substr(0, 9), "creating ") << answer;
  auto summary = sut.memory_summary();
  ASSERT_TRUE(summary);
  ASSERT_EQ(summary->objects.size(), 1u);
  EXPECT_FALSE(summary->objects[0].sealed);
  kill_and_wait(*peer);
  auto reaped = sut.reap();
  ASSERT_TRUE(reaped);
  EXPECT_EQ(*reaped, 1u);
  summary = sut.memory_summary();
  ASSERT_TRUE(summary);
  EXPECT_TRUE(summary->objects.empty());
  EXPECT_EQ(summary->bytes_used, 0u);
}

TEST_F(multiprocess_test, TicketCrossesProcessesAndKeepsTheCount) {
  auto ref = sut.put(pattern(9000, 6));
  ASSERT_TRUE(ref);
  auto sum = checksum(ref->bytes());
  auto ticket = ref->export_in_band();
  ASSERT_TRUE(ticket);
  auto id = ref->id();
  ref->reset(); // only the ticket keeps the object now
  auto peer = start_peer();
  EXPECT_EQ(ask(*peer, "redeem " + to_string(ticket->object) + " "
                         + std::to_string(ticket->id)),
            "redeemed " + std::to_string(sum));
  auto holders = holders_of(id);
  ASSERT_EQ(holders.size(), 1u);
  EXPECT_EQ(holders[0].pid, peer->pid());
  EXPECT_EQ(holders[0].handles, 1u);
  EXPECT_EQ(holders[0].in_transit, 0u);
  EXPECT_EQ(ask(*peer, "drop " + to_string(id)), "dropped 1");
  EXPECT_FALSE(sut.get(id));
  peer->close_stdin();
  EXPECT_TRUE(peer->wait().ok());
}

TEST_F(multiprocess_test, TicketOfAKilledExporterIsReclaimed) {
  auto peer = start_peer();
  auto answer = ask(*peer, "put 4000 8");
  ASSERT_EQ(answer.substr(0, 4), "put ");
  auto id = answer.substr(4);
  auto ticket_line = ask(*peer, "export " + id);
  ASSERT_EQ(ticket_line.substr(0, 7), "ticket ") << ticket_line;
  ASSERT_EQ(ask(*peer, "drop " + id), "dropped 1");
  std::istringstream in{ticket_line.substr(7)};
  uint64_t object = 0;
  uint64_t ticket_id = 0;
  in >> object >> ticket_id;
  auto holders = holders_of(object_id{object});
  ASSERT_EQ(holders.size(), 1u);
  EXPECT_EQ(holders[0].in_transit, 1u);
  kill_and_wait(*peer);
  auto reaped = sut.reap();
  ASSERT_TRUE(reaped);
  EXPECT_EQ(*reaped, 1u);
  EXPECT_FALSE(sut.get(object_id{object}));
  auto redeemed = sut.redeem(transfer_ticket{object_id{object}, ticket_id});
  ASSERT_FALSE(redeemed);
  EXPECT_EQ(code_of(redeemed.error()), errc::ticket_not_found);
}

TEST_F(multiprocess_test, PinLastsUntilTheOwningProcessExits) {
  auto peer = start_peer();
  auto answer = ask(*peer, "put 4000 8");
  ASSERT_EQ(answer.substr(0, 4), "put ");
  auto id = answer.substr(4);
  ASSERT_EQ(ask(*peer, "pin " + id), "pinned");
  ASSERT_EQ(ask(*peer, "drop " + id), "dropped 1");
  auto pinned = sut.get(object_id{std::stoull(id)});
  ASSERT_TRUE(pinned) << render(pinned.error());
  pinned->reset();
  peer->close_stdin();
  EXPECT_TRUE(peer->wait().ok());
  EXPECT_FALSE(sut.get(object_id{std::stoull(id)}));
}

TEST_F(multiprocess_test, FerryStoreToolListsObjectsAndHolders) {
  auto ref = sut.put(pattern(12345, 1));
  ASSERT_TRUE(ref);
  auto pinned = sut.put(pattern(10, 2));
  ASSERT_TRUE(pinned);
  auto previous = set_log_hook([](std::string_view) {});
  ASSERT_TRUE(to_wire(*pinned));
  set_log_hook(std::move(previous));
  child_process tool{FERRY_STORE_TOOL, {"--name", cleanup.cfg.name, "list"}};
  std::string output;
  while (auto line = tool.read_line())
    output += *line + "\n";
  EXPECT_TRUE(tool.wait().ok()) << output;
  auto row = output.find(to_string(ref->id()));
  ASSERT_NE(row, std::string::npos) << output;
  auto row_end = output.find('\n', row);
  auto line = output.substr(row, row_end - row);
  EXPECT_NE(line.find("12345"), std::string::npos) << line;
  EXPECT_NE(line.find("sealed"), std::string::npos) << line;
  EXPECT_NE(line.find(std::to_string(::getpid()) + ": 1/0/0"),
            std::string::npos)
    << line;
  auto pin_row = output.find(to_string(pinned->id()) + " ");
  ASSERT_NE(pin_row, std::string::npos) << output;
  EXPECT_NE(output.find("yes", pin_row), std::string::npos) << output;
  EXPECT_NE(output.find("capacity 1.0 MiB"), std::string::npos) << output;
  EXPECT_NE(output.find("2 objects"), std::string::npos) << output;
}

TEST_F(multiprocess_test, FerryStoreToolReapCountsTheDeadProcessesItFreed) {
  // Arrange: a peer holds the only reference to an object, then is killed.
  auto peer = start_peer();
  auto answer = ask(*peer, "put 3000 5");
  ASSERT_EQ(answer.substr(0, 4), "put ");
  auto id = object_id{std::stoull(answer.substr(4))};
  kill_and_wait(*peer);
  // Act: the tool reaps it (when it attaches, which reaps, or in `reap`).
  child_process tool{FERRY_STORE_TOOL, {"--name", cleanup.cfg.name, "reap"}};
  auto line = tool.read_line();
  auto status = tool.wait();
  // Assert: it says so, and the object went with its only holder.
  EXPECT_TRUE(status.ok()) << to_string(status);
  EXPECT_EQ(line.value_or("<no output>"), "reaped 1 dead process(es)");
  auto gone = sut.get(id);
  ASSERT_FALSE(gone);
  EXPECT_EQ(code_of(gone.error()), errc::object_not_found);
}

TEST_F(multiprocess_test, ProcessesKilledAtRandomPointsLeaveNothingBehind) {
  // Three children churn on the store (puts, copies, tickets, builders,
  // spills) and are killed -9 wherever they happen to be: inside the lock,
  // inside spill I/O, or between calls. Whatever the point, reaping must
  // leave an empty, working store.
  for (uint32_t round = 0; round < 3; ++round) {
    std::vector<std::unique_ptr<child_process>> peers;
    for (uint32_t i = 0; i < 3; ++i) {
      peers.push_back(start_peer());
      EXPECT_EQ(ask(*peers.back(), "churn " + std::to_string(round * 3 + i)),
                "churning");
    }
    for (auto& peer : peers) {
      // Let it run for a while (a few store calls; not timed).
      auto summary = sut.memory_summary();
      ASSERT_TRUE(summary) << render(summary.error());
      kill_and_wait(*peer);
    }
    auto reaped = sut.reap();
    ASSERT_TRUE(reaped) << render(reaped.error());
    auto summary = sut.memory_summary();
    ASSERT_TRUE(summary);
    EXPECT_TRUE(summary->objects.empty()) << to_string(*summary);
    EXPECT_EQ(summary->bytes_used, 0u);
    EXPECT_EQ(summary->bytes_spilled, 0u);
    EXPECT_EQ(summary->largest_free_block, summary->capacity - 64);
    EXPECT_EQ(summary->processes.size(), 1u);
  }
  // The store still works: fill it completely.
  std::vector<object_ref> fill;
  for (;;) {
    auto ref = sut.put(pattern(100000, 1));
    if (!ref)
      break;
    fill.push_back(std::move(*ref));
  }
  EXPECT_EQ(fill.size(), 10u);
  std::error_code ec;
  EXPECT_TRUE(std::filesystem::is_empty(cleanup.cfg.spill_directory, ec)
              || ec);
}

/// Returns the path of `unshare` if `unshare --pid --fork --mount-proc`
/// works here (it needs root or unprivileged user namespaces), else "".
std::string pid_namespace_launcher() {
  for (std::string path : {"/usr/bin/unshare", "/bin/unshare"}) {
    if (::access(path.c_str(), X_OK) != 0)
      continue;
    child_process probe{path, {"--pid", "--fork", "--mount-proc", "true"}};
    return probe.wait().ok() ? path : std::string{};
  }
  return {};
}

TEST_F(multiprocess_test, ProcessInAnotherPidNamespaceIsRefused) {
  // Arrange: a peer in a new PID namespace cannot see this process in its
  // /proc; it must not take it for dead and free its objects. (The suite
  // runs as root, as `.ci/run` does; object_store_test proves the refusal
  // without a second namespace.)
  auto unshare = pid_namespace_launcher();
  ASSERT_FALSE(unshare.empty())
    << "`unshare --pid --fork --mount-proc true` fails here: run the suite "
       "as root (or with unprivileged user namespaces)";
  auto ours = sut.put(pattern(1000, 1));
  ASSERT_TRUE(ours);
  // Act
  child_process peer{unshare,
                     {"--pid", "--fork", "--mount-proc", FERRY_STORE_PEER,
                      cleanup.cfg.name}};
  auto answer = peer.read_line();
  peer.close_stdin();
  auto status = peer.wait();
  // Assert: refused with the fix, and nothing of ours was reaped.
  ASSERT_TRUE(answer) << "peer said nothing";
  EXPECT_TRUE(answer->starts_with("error ferry_sto: foreign_pid_namespace"))
    << *answer;
  EXPECT_NE(answer->find("another PID namespace"), std::string::npos)
    << *answer;
  EXPECT_NE(answer->find("ferry.store.name"), std::string::npos) << *answer;
  EXPECT_FALSE(status.ok()) << to_string(status);
  auto reaped = sut.reap();
  ASSERT_TRUE(reaped);
  EXPECT_EQ(*reaped, 0u);
  EXPECT_EQ(ours->ref_count(), 1u);
  auto again = sut.get(ours->id());
  ASSERT_TRUE(again) << render(again.error());
  EXPECT_EQ(checksum(again->bytes()), checksum(pattern(1000, 1)));
}

TEST(multiprocess_tool, FerryStoreToolFailsForAMissingStore) {
  child_process tool{FERRY_STORE_TOOL,
                     {"--name", unique_name("none"), "list"}};
  while (tool.read_line()) {
    // drain
  }
  auto status = tool.wait();
  EXPECT_TRUE(status.exited);
  EXPECT_EQ(status.code, 1);
}

TEST(multiprocess_reaper, PeriodicReaperReclaimsWithoutAnyCall) {
  store_cleanup cleanup{small_config("periodic")};
  cleanup.cfg.reaper_interval = std::chrono::milliseconds{20};
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(sut);
  child_process peer{FERRY_STORE_PEER, {cleanup.cfg.name}};
  ASSERT_TRUE(peer.wait_for("ready "));
  peer.write_line("put 1000 1");
  auto answer = peer.read_line();
  ASSERT_TRUE(answer && answer->starts_with("put ")) << answer.value_or("");
  peer.kill(SIGKILL);
  peer.wait();
  EXPECT_TRUE(ferry::test::eventually([&] {
    auto summary = sut->memory_summary();
    return summary && summary->objects.empty()
           && summary->processes.size() == 1;
  }, std::chrono::minutes{2}));
}

} // namespace
