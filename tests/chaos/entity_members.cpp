// The entity side of a chaos run: see entity_members.hpp.
#include "entity_members.hpp"

#include "ferry/test/namespaces.hpp"

#include <csignal>
#include <filesystem>
#include <thread>

namespace ferry::chaos {

namespace {

using namespace std::chrono_literals;
using test::child_process;

constexpr const char* member_port = "7402";

/// The cluster's timing: a member unreachable for about two seconds is
/// downed 3 s later (a member stopped for 5 s is downed or not, as the
/// detection goes); leases of 2 s (at most stable-after). Detection allows
/// for a loaded machine: eleven processes share it.
const std::vector<std::string>& timing_flags() {
  static const std::vector<std::string> flags{
    "--ferry.cluster.name=chaos-entities",
    "--ferry.cluster.gossip-interval=200ms",
    "--ferry.cluster.heartbeat-interval=200ms",
    "--ferry.cluster.acceptable-pause=2s",
    "--ferry.cluster.seed-timeout=2s",
    "--ferry.cluster.stable-after=3s",
    "--ferry.entities.lease=2s",
    "--ferry.entities.hand-off-timeout=3s",
    "--ferry.entities.shards=50",
    "--ferry.store.disabled",
    "--ferry.link.heartbeat-interval=500ms",
    "--ferry.link.connection-timeout=3s",
    "--ferry.transport.handshake-timeout=3s"};
  return flags;
}

} // namespace

entity_members::entity_members(const test::bridge_hosts& net, size_t members,
                               std::string dir, uint64_t keys)
  : net_(net), count_(members), dir_(std::move(dir)), keys_(keys),
    members_(members), killed_(members, false) {
  // nop
}

entity_members::~entity_members() {
  for (auto& m : members_)
    if (m && m->running()) {
      m->kill(SIGCONT);
      m->kill(SIGKILL);
      m->wait(10s);
    }
  if (database_ && database_->running()) {
    database_->close_stdin();
    database_->wait(60s);
  }
}

std::string entity_members::start() {
  database_ = std::make_unique<child_process>(
    test::ip_tool(),
    std::vector<std::string>{"netns", "exec", net_.ns(count_),
                             FERRY_POSTGRES_SERVER,
                             "--listen=" + net_.address(count_), "chaos"});
  auto line = database_->read_line(120s);
  if (!line || line->rfind("ready ", 0) != 0)
    return "no PostgreSQL server on the database host: "
           + line.value_or("(no output)");
  store_ = "postgresql:" + line->substr(6);
  for (size_t i = 0; i < count_; ++i)
    if (auto why = start_member(i); !why.empty())
      return why;
  return {};
}

std::vector<std::string> entity_members::member_args(size_t i) const {
  std::string hosts;
  std::string seeds;
  for (size_t j = 0; j < count_; ++j) {
    hosts += (j == 0 ? "" : ",") + net_.address(j);
    seeds += std::string{j == 0 ? "" : ","} + "\"" + net_.address(j) + ":"
             + member_port + "\"";
  }
  std::vector<std::string> args{
    "netns", "exec", net_.ns(i), FERRY_CHAOS_ENTITIES,
    "--chaos-index=" + std::to_string(i), "--chaos-hosts=" + hosts,
    std::string{"--chaos-port="} + member_port, "--chaos-history=" + dir_,
    "--chaos-keys=" + std::to_string(keys_),
    "--ferry.entities.store=" + store_};
  args.insert(args.end(), timing_flags().begin(), timing_flags().end());
  args.push_back("--ferry.cluster.seeds=[" + seeds + "]");
  return args;
}

std::string entity_members::start_member(size_t i) {
  auto args = member_args(i);
  args.push_back("--chaos-stderr=" + dir_ + "/e" + std::to_string(i + 1) + "-"
                 + std::to_string(incarnations_) + ".stderr");
  members_[i] = std::make_unique<child_process>(test::ip_tool(),
                                                std::move(args));
  killed_[i] = false;
  ++incarnations_;
  auto line = members_[i]->read_line(30s);
  if (!line || line->rfind("started ", 0) != 0) {
    auto why = "entity member e" + std::to_string(i + 1) + " did not start: "
               + line.value_or("(no output)");
    problems_.push_back(why);
    return why;
  }
  return {};
}

void entity_members::kill(size_t i) {
  if (members_[i] && members_[i]->running()) {
    members_[i]->kill(SIGKILL);
    members_[i]->wait(10s);
  }
  killed_[i] = true;
}

void entity_members::restart(size_t i) {
  static_cast<void>(start_member(i)); // a failure is among the problems
}

void entity_members::stop(size_t i) {
  if (members_[i] && members_[i]->running())
    members_[i]->stop();
}

void entity_members::resume(size_t i) {
  if (members_[i] && members_[i]->running())
    members_[i]->kill(SIGCONT);
}

void entity_members::tend(bool whole) {
  for (size_t i = 0; i < count_; ++i) {
    auto& m = members_[i];
    if (!m || killed_[i])
      continue;
    auto status = m->poll();
    if (!status)
      continue;
    if (!status->ok()) {
      problems_.push_back("entity member e" + std::to_string(i + 1)
                          + " ended with " + test::to_string(*status));
      killed_[i] = true; // not started again: the run reports it
      continue;
    }
    // It saw itself downed: it comes back once the network is whole.
    if (whole)
      start_member(i);
  }
}

bool entity_members::wait_all_up(std::chrono::milliseconds timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    tend(true);
    bool all = true;
    for (size_t i = 0; i < count_ && all; ++i) {
      if (!members_[i] || !members_[i]->running())
        all = false;
      else {
        members_[i]->write_line("up");
        auto answer = members_[i]->read_line(10s);
        all = answer == "up " + std::to_string(count_);
      }
    }
    if (all)
      return true;
    std::this_thread::sleep_for(500ms);
  }
  return false;
}

void entity_members::finish() {
  if (!wait_all_up(60s))
    problems_.push_back("the entity members were not all up within 60 s of "
                        "the last fault");
  for (size_t i = 0; i < count_; ++i) {
    if (!members_[i] || !members_[i]->running())
      continue;
    members_[i]->write_line("quiet");
    auto answer = members_[i]->read_line(90s);
    if (answer != "quiet 0")
      problems_.push_back("entity member e" + std::to_string(i + 1)
                          + " answered `quiet` with `"
                          + answer.value_or("(nothing)")
                          + "` (operations given up 60 s after the faults "
                            "healed)");
  }
  for (size_t i = 0; i < count_; ++i) {
    if (!members_[i] || !members_[i]->running())
      continue;
    members_[i]->close_stdin();
    if (auto status = members_[i]->wait(60s); !status.ok())
      problems_.push_back("entity member e" + std::to_string(i + 1)
                          + " ended with " + test::to_string(status));
  }
  // The checker: alone in a cluster of its own, on host 0.
  auto args = member_args(0);
  args.push_back("--chaos-dump");
  args.push_back("--chaos-stderr=" + dir_ + "/check.stderr");
  for (auto& arg : args)
    if (arg.rfind("--ferry.cluster.seeds=", 0) == 0)
      arg = "--ferry.cluster.seeds=[\"" + net_.address(0) + ":" + member_port
            + "\"]";
  child_process checker{test::ip_tool(), std::move(args)};
  auto line = checker.read_line(30s);
  if (!line || line->rfind("started ", 0) != 0) {
    problems_.push_back("the checker did not start: "
                        + line.value_or("(no output)"));
    return;
  }
  // It holds every shard once it is up alone.
  for (int i = 0; i < 300; ++i) {
    checker.write_line("up");
    if (checker.read_line(10s) == "up 1")
      break;
    std::this_thread::sleep_for(100ms);
  }
  checker.write_line("dump");
  auto dumped = checker.read_line(600s);
  if (dumped != "dumped " + std::to_string(keys_) + " 0")
    problems_.push_back("the checker answered `dump` with `"
                        + dumped.value_or("(nothing)") + "`");
  checker.close_stdin();
  if (auto status = checker.wait(60s); !status.ok())
    problems_.push_back("the checker ended with " + test::to_string(status));
}

std::vector<history>
entity_members::histories(std::vector<violation>& problems) const {
  return read_histories(dir_, ".ehistory", problems);
}

} // namespace ferry::chaos
