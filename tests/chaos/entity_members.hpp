// The entity side of a chaos run: a PostgreSQL server on a host of its own
// (the database host: a partition cuts members off each other, not off the
// database; loss and bandwidth cuts on a member's host slow its database
// traffic too), and one entity member (chaos_entities.cpp) beside each node,
// e1..e5 in a cluster of their own, with their accounts' state in that
// database.
//
// The run applies its faults to a host's member as to its node (a kill
// kills both, a stop stops both), and calls `tend` while it waits: a member
// that saw itself downed and exited is started again as a new incarnation
// once no partition holds (a downed member comes back only by restarting).
// `finish` stops the workload, lets every member leave, then starts the
// checker (a member alone in a cluster of its own) that reads every account
// from the database; `histories` returns what they all wrote, for
// check_entities (entity_checks.hpp).
//
// Thread-safety: one test thread owns it.
#pragma once

#include "history.hpp"
#include "violation.hpp"

#include "ferry/test/bridge_hosts.hpp"
#include "ferry/test/child_process.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace ferry::chaos {

class entity_members {
public:
  /// Members on hosts 0..members-1 of `net`, the database on host
  /// `members`; histories and logs go to `dir`.
  entity_members(const test::bridge_hosts& net, size_t members,
                 std::string dir, uint64_t keys);

  entity_members(const entity_members&) = delete;
  entity_members& operator=(const entity_members&) = delete;

  /// Kills what still runs.
  ~entity_members();

  /// Starts the database and every member; returns what went wrong.
  std::string start();

  /// Kills member `i` with SIGKILL (nothing if it is not running).
  void kill(size_t i);

  /// Starts member `i` again (after `kill`).
  void restart(size_t i);

  /// Stops member `i` (SIGSTOP); `resume` continues it.
  void stop(size_t i);
  void resume(size_t i);

  /// Starts again the members that exited after seeing themselves downed,
  /// when `whole` (no partition holds); a member that ended otherwise is a
  /// problem.
  void tend(bool whole);

  /// Waits until every member sees all of them up (members restarted
  /// meanwhile), up to `timeout`; false if not.
  bool wait_all_up(std::chrono::milliseconds timeout);

  /// Stops the workload, ends every member, and runs the checker.
  void finish();

  /// Reads the histories of the members and the checker.
  std::vector<history> histories(std::vector<violation>& problems) const;

  /// What went wrong with the processes (not the invariants).
  const std::vector<std::string>& problems() const { return problems_; }

  /// Member incarnations started, the first ones included.
  size_t incarnations() const { return incarnations_; }

private:
  std::vector<std::string> member_args(size_t i) const;
  std::string start_member(size_t i);

  const test::bridge_hosts& net_;
  size_t count_;
  std::string dir_;
  uint64_t keys_;
  std::string store_;
  std::unique_ptr<test::child_process> database_;
  std::vector<std::unique_ptr<test::child_process>> members_;
  std::vector<bool> killed_;
  size_t incarnations_ = 0;
  std::vector<std::string> problems_;
};

} // namespace ferry::chaos
