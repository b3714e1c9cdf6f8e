// The chaos run: five nodes (chaos_node.cpp) on five hosts (network
// namespaces on one bridge, ferry/test/bridge_hosts.hpp), each with its own
// store, run their workload while faults drawn from a seed
// (fault_schedule.hpp) hit them: SIGKILL and restart, partitions and packet
// loss (nftables rules in a host's namespace), added delay (the delaying
// relay, chaos_relay.cpp, on the link from n1 to n2), a bandwidth cut (tbf
// on both ends of a host's veth), a store filled to its bound, and SIGSTOP
// for 5 s. Then the faults heal, the links come back, the workload stops,
// and every node's history is checked against the invariants
// (invariants.hpp): requests answered exactly once within their timeout,
// nothing delivered twice, per-pair order with losses only at a link's end,
// checksums, monitors, stores drained to 0 objects, memory within 1.2 × its
// size after warm-up; and every node exits 0 with no sanitizer report.
// Beside each node an entity member runs the entity workload against
// accounts stored in PostgreSQL on a sixth host (entity_members.hpp), under
// the same faults; its histories are checked against the entity invariants
// (entity_checks.hpp): single activation, acknowledged saves durable, no
// operation applied twice, per-sender order.
//
// The run is short by default (about two minutes: 15 s warm-up, 70 s of
// faults, 15 s settling); FERRY_CHAOS_MINUTES=<m> (above 2) makes it about
// m minutes long, FERRY_CHAOS_SEED=<n> picks the schedule (default 1), and
// FERRY_CHAOS_FAULTS=0 runs the workload without faults (a baseline). A
// failure prints the seed, the schedule as applied and the history lines of
// each violation; the histories stay in the directory it names. At start it
// checks that the kernel offers what the faults need (nftables, tbf) and
// names the missing kind: skipped outside CI, a failure in CI
// (FERRY_REQUIRE_PRIVILEGED_TESTS=1), as every namespace test.
#include "entity_checks.hpp"
#include "entity_members.hpp"
#include "fault_schedule.hpp"
#include "history.hpp"
#include "invariants.hpp"

#include "ferry/test/bridge_hosts.hpp"
#include "ferry/test/child_process.hpp"
#include "ferry/test/namespaces.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace ferry::chaos {
namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;
using test::child_process;
using test::ip;
using test::ip_tool;

constexpr size_t hosts = 5;
constexpr const char* node_port = "7400";
constexpr const char* relay_port = "7401";
/// The relay runs on n2's host; n1 dials n2 through it.
constexpr size_t delay_host = 1;

/// How long each part of the run lasts.
struct run_settings {
  uint64_t seed = 1;
  std::chrono::milliseconds warm{15s};
  std::chrono::milliseconds phase{70s};
  std::chrono::milliseconds settle{15s};
  int object_ms = 6000;
  /// Accounts of the entity workload.
  uint64_t entity_keys = 2000;
  /// False: the workload runs without faults (a baseline).
  bool faults = true;
};

run_settings settings_from_environment() {
  run_settings out;
  if (auto* seed = std::getenv("FERRY_CHAOS_SEED"))
    out.seed = std::stoull(seed);
  if (auto* faults = std::getenv("FERRY_CHAOS_FAULTS"))
    out.faults = std::string{faults} != "0";
  if (auto* minutes = std::getenv("FERRY_CHAOS_MINUTES")) {
    auto m = std::stoll(minutes);
    if (m > 2) {
      out.warm = 30s;
      out.settle = 20s;
      out.phase = std::chrono::minutes{m} - 60s;
      out.entity_keys = 10000;
    }
  }
  return out;
}

std::string name_of(size_t i) {
  return "n" + std::to_string(i + 1);
}

/// Returns CLOCK_MONOTONIC in microseconds, as the histories count time.
int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
           clock::now().time_since_epoch())
    .count();
}

/// Runs `program args...` in network namespace `ns`; true on exit code 0.
bool in_ns(const std::string& ns, std::vector<std::string> args) {
  args.insert(args.begin(), {"netns", "exec", ns});
  return ip(args);
}

class chaos_run {
public:
  explicit chaos_run(run_settings settings)
    : settings_(settings), net_(hosts + 1), nodes_(hosts), restarts_(hosts),
      started_(hosts), warmed_(hosts, false) {
    dir_ = (std::filesystem::temp_directory_path()
            / ("ferry-chaos-" + std::to_string(getpid())))
             .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  ~chaos_run() {
    // A run that ended early leaves processes and their stores behind.
    for (auto& node : nodes_)
      if (node && node->running()) {
        node->kill(SIGKILL);
        node->wait(10s);
      }
    for (size_t i = 0; i < hosts; ++i)
      std::filesystem::remove("/dev/shm/" + store_name(i));
  }

  const std::string& dir() const {
    return dir_;
  }

  /// Makes the hosts; returns what went wrong.
  std::string set_up() {
    return net_.set_up();
  }

  /// Returns the fault kinds this kernel cannot inject, with the reason.
  std::string missing_kinds() {
    std::string out;
    auto& ns = net_.ns(0);
    if (!in_ns(ns, {"nft", "add", "table", "inet", "chaos_probe"})
        || !in_ns(ns, {"nft", "delete", "table", "inet", "chaos_probe"}))
      out += "partition and loss (`nft add table inet` fails in a network "
             "namespace: nftables missing, Debian package nftables); ";
    auto dev = net_.inner(0);
    if (!in_ns(ns, {"tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate",
                    "10mbit", "burst", "32kbit", "latency", "400ms"})
        || !in_ns(ns, {"tc", "qdisc", "del", "dev", dev, "root"}))
      out += "bandwidth (`tc qdisc add ... tbf` fails: no tbf qdisc); ";
    return out;
  }

  /// Starts the relay and every node; returns what went wrong.
  std::string start() {
    // Under AddressSanitizer, freed memory waits in a quarantine of 256 MiB
    // before it is reused, which the resident size would count as growth:
    // the nodes get a small one (leaks are LeakSanitizer's to find).
    if (auto* asan = std::getenv("ASAN_OPTIONS"))
      setenv("ASAN_OPTIONS",
             (std::string{asan} + ":quarantine_size_mb=16").c_str(), 1);
    relay_ = std::make_unique<child_process>(
      ip_tool(), std::vector<std::string>{"netns", "exec",
                                          net_.ns(delay_host),
                                          FERRY_CHAOS_RELAY,
                                          net_.address(delay_host),
                                          relay_port, node_port});
    if (auto line = relay_->read_line(10s); !line || *line != "listening")
      return "the relay did not start: " + line.value_or("(no output)");
    for (size_t i = 0; i < hosts; ++i)
      if (auto why = start_node(i); !why.empty())
        return why;
    entities_ = std::make_unique<entity_members>(net_, hosts, dir_,
                                                 settings_.entity_keys);
    return entities_->start();
  }

  /// Waits until every node uses a link to each other node.
  bool wait_all_linked(std::chrono::milliseconds timeout) {
    auto until = clock::now() + timeout;
    while (clock::now() < until) {
      bool all = true;
      for (size_t i = 0; i < hosts; ++i)
        all &= command(i, "links") == "links " + std::to_string(hosts - 1);
      if (all)
        return true;
      std::this_thread::sleep_for(200ms);
    }
    return false;
  }

  /// Warms up, then applies `schedule`, then heals and settles.
  void run(const std::vector<fault>& schedule) {
    idle(settings_.warm);
    for (size_t i = 0; i < hosts; ++i)
      warm(i);
    auto t0 = clock::now();
    for (auto& f : schedule) {
      idle_until(t0 + std::chrono::milliseconds{f.at_ms});
      applied_.push_back(render(f));
      ++by_kind_[to_string(f.kind)];
      apply(f);
      idle_until(t0 + std::chrono::milliseconds{f.at_ms + f.duration_ms});
      if (!revert(f))
        problems_.push_back("could not undo " + render(f));
    }
    idle_until(t0 + settings_.phase);
    if (!wait_all_linked(60s))
      problems_.push_back("the links did not all come back within 60 s of "
                          "the last fault");
    idle(settings_.settle);
  }

  /// Stops the workload, drains the stores and ends every process; what
  /// went wrong goes to `problems()`.
  void finish() {
    for (size_t i = 0; i < hosts; ++i)
      expect(i, "quiet", "quiet", 90s);
    entities_->finish();
    std::this_thread::sleep_for(2s);
    for (size_t i = 0; i < hosts; ++i)
      expect(i, "drain 20000", "store ", 30s);
    for (size_t i = 0; i < hosts; ++i)
      expect(i, "close", "closed", 10s);
    for (size_t i = 0; i < hosts; ++i)
      nodes_[i]->close_stdin();
    for (size_t i = 0; i < hosts; ++i)
      if (auto status = nodes_[i]->wait(60s); !status.ok())
        problems_.push_back(name_of(i) + " ended with "
                            + test::to_string(status));
    relay_->close_stdin();
    relay_->wait(10s);
    for (auto& entry : std::filesystem::directory_iterator(dir_))
      if (entry.path().extension() == ".stderr")
        scan_stderr(entry.path());
  }

  const entity_members& entities() const {
    return *entities_;
  }

  /// Reads every history the nodes wrote.
  std::vector<history> histories(std::vector<violation>& problems) {
    return read_histories(dir_, ".history", problems);
  }

  const std::vector<std::string>& applied() const {
    return applied_;
  }

  const std::map<std::string, int>& by_kind() const {
    return by_kind_;
  }

  const std::vector<std::string>& problems() const {
    return problems_;
  }

  /// Returns the times each stopped incarnation was stopped.
  const std::map<std::string, std::vector<std::pair<int64_t, int64_t>>>&
  paused() const {
    return paused_;
  }

private:
  std::string start_node(size_t i) {
    std::string addresses;
    for (size_t j = 0; j < hosts; ++j)
      addresses += (j == 0 ? "" : ",") + net_.address(j);
    auto tag = name_of(i) + "-" + std::to_string(restarts_[i]);
    std::vector<std::string> args{
      "netns",
      "exec",
      net_.ns(i),
      FERRY_CHAOS_NODE,
      "--chaos-index=" + std::to_string(i),
      "--chaos-hosts=" + addresses,
      std::string{"--chaos-port="} + node_port,
      "--chaos-history=" + dir_,
      "--chaos-stderr=" + dir_ + "/" + tag + ".stderr",
      "--chaos-object-ms=" + std::to_string(settings_.object_ms),
      "--ferry.store.name=" + store_name(i),
      "--ferry.store.capacity=512MiB",
      "--ferry.store.spill-directory=" + dir_ + "/spill-" + name_of(i),
      "--ferry.link.heartbeat-interval=500ms",
      "--ferry.link.connection-timeout=3s",
      "--ferry.transport.handshake-timeout=3s"};
    if (i == 0)
      args.push_back("--chaos-dial=" + std::to_string(delay_host) + ":"
                     + relay_port);
    ++restarts_[i];
    nodes_[i] = std::make_unique<child_process>(ip_tool(), std::move(args));
    started_[i] = clock::now();
    warmed_[i] = false;
    auto line = nodes_[i]->read_line(30s);
    if (!line || line->rfind("started ", 0) != 0)
      return name_of(i) + " did not start: " + line.value_or("(no output)");
    return {};
  }

  static std::string store_name(size_t i) {
    return "ferry-chaos-" + std::to_string(getpid()) + "-" + name_of(i);
  }

  std::string command(size_t i, const std::string& line,
                      std::chrono::milliseconds timeout = 10s) {
    nodes_[i]->write_line(line);
    auto answer = nodes_[i]->read_line(timeout);
    return answer ? *answer : "(no answer from " + name_of(i) + ")";
  }

  void expect(size_t i, const std::string& line, const std::string& prefix,
              std::chrono::milliseconds timeout) {
    auto answer = command(i, line, timeout);
    if (answer.rfind(prefix, 0) != 0)
      problems_.push_back(name_of(i) + " answered `" + line + "` with `"
                          + answer + "`");
  }

  void warm(size_t i) {
    expect(i, "warm", "rss ", 10s);
    warmed_[i] = true;
  }

  /// Waits for `d`, warming up restarted nodes meanwhile.
  void idle(std::chrono::milliseconds d) {
    idle_until(clock::now() + d);
  }

  void idle_until(clock::time_point until) {
    while (clock::now() < until) {
      for (size_t i = 0; i < hosts; ++i)
        if (!warmed_[i] && i != stopped_ && restarts_[i] > 1
            && clock::now() - started_[i] > settings_.warm)
          warm(i);
      entities_->tend(!partitioned_);
      std::this_thread::sleep_until(std::min(until, clock::now() + 200ms));
    }
  }

  std::string others_of(const std::vector<size_t>& side) const {
    std::string out;
    for (size_t j = 0; j < hosts; ++j)
      if (std::find(side.begin(), side.end(), j) == side.end())
        out += (out.empty() ? "" : ", ") + net_.address(j);
    return "{ " + out + " }";
  }

  bool nft_table(size_t h, const std::string& table,
                 const std::vector<std::string>& in_rule,
                 const std::vector<std::string>& out_rule) {
    auto& ns = net_.ns(h);
    auto rule = [&](const std::string& chain, std::vector<std::string> r) {
      r.insert(r.begin(), {"nft", "add", "rule", "inet", table, chain});
      return in_ns(ns, std::move(r));
    };
    return in_ns(ns, {"nft", "add", "table", "inet", table})
           && in_ns(ns, {"nft", "add", "chain", "inet", table, "in",
                         "{ type filter hook input priority 0 ; }"})
           && in_ns(ns, {"nft", "add", "chain", "inet", table, "out",
                         "{ type filter hook output priority 0 ; }"})
           && rule("in", in_rule) && rule("out", out_rule);
  }

  bool tbf(const std::string& ns, const std::string& dev, int mbit) {
    return in_ns(ns, {"tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate",
                      std::to_string(mbit) + "mbit", "burst", "32kbit",
                      "latency", "400ms"});
  }

  void apply(const fault& f) {
    auto h = f.targets.front();
    bool ok = true;
    switch (f.kind) {
      case fault_kind::kill: {
        // wait(0) kills the node; a node that had ended already (a crash)
        // says how.
        auto status = nodes_[h]->wait(0ms);
        if (status.exited || status.code != SIGKILL)
          problems_.push_back(name_of(h) + " had ended with "
                              + test::to_string(status)
                              + " before the fault killed it");
        entities_->kill(h);
        break;
      }
      case fault_kind::partition:
        partitioned_ = true;
        for (auto t : f.targets)
          ok &= nft_table(t, "chaos_part",
                          {"ip", "saddr", others_of(f.targets), "drop"},
                          {"ip", "daddr", others_of(f.targets), "drop"});
        break;
      case fault_kind::loss: {
        auto n = std::to_string(f.param);
        ok = nft_table(h, "chaos_loss",
                       {"iifname", net_.inner(h), "numgen", "random", "mod",
                        "100", "<", n, "drop"},
                       {"oifname", net_.inner(h), "numgen", "random", "mod",
                        "100", "<", n, "drop"});
        break;
      }
      case fault_kind::delay:
        relay_->write_line("delay " + std::to_string(f.param) + " 20");
        ok = relay_->read_line(10s).has_value();
        break;
      case fault_kind::bandwidth:
        ok = tbf(net_.ns(h), net_.inner(h), f.param)
             && tbf(net_.bridge_ns(), net_.outer(h), f.param);
        break;
      case fault_kind::fill:
        expect(h, "fill " + std::to_string(f.duration_ms), "filling", 10s);
        break;
      case fault_kind::stop:
        stopped_since_ = now_us();
        ok = nodes_[h]->stop();
        entities_->stop(h);
        if (!ok)
          problems_.push_back(name_of(h) + " could not be stopped: it had "
                              "ended with "
                              + test::to_string(nodes_[h]->wait(0ms)));
        stopped_ = h;
        break;
    }
    if (!ok)
      problems_.push_back("could not apply " + render(f));
  }

  bool revert(const fault& f) {
    auto h = f.targets.front();
    switch (f.kind) {
      case fault_kind::kill:
        entities_->restart(h);
        if (auto why = start_node(h); !why.empty()) {
          problems_.push_back(why);
          return false;
        }
        return true;
      case fault_kind::partition: {
        partitioned_ = false;
        bool ok = true;
        for (auto t : f.targets)
          ok &= in_ns(net_.ns(t), {"nft", "delete", "table", "inet",
                                   "chaos_part"});
        return ok;
      }
      case fault_kind::loss:
        return in_ns(net_.ns(h), {"nft", "delete", "table", "inet",
                                  "chaos_loss"});
      case fault_kind::delay:
        relay_->write_line("delay 0 0");
        return relay_->read_line(10s).has_value();
      case fault_kind::bandwidth:
        return in_ns(net_.ns(h), {"tc", "qdisc", "del", "dev", net_.inner(h),
                                  "root"})
               && in_ns(net_.bridge_ns(), {"tc", "qdisc", "del", "dev",
                                           net_.outer(h), "root"});
      case fault_kind::fill:
        return true;
      case fault_kind::stop:
        nodes_[h]->kill(SIGCONT);
        entities_->resume(h);
        paused_[name_of(h) + "-" + std::to_string(nodes_[h]->pid())]
          .emplace_back(stopped_since_, now_us());
        stopped_ = hosts;
        return true;
    }
    return false;
  }

  void scan_stderr(const std::filesystem::path& file) {
    std::ifstream in{file};
    size_t line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      for (auto mark : {"Sanitizer", "runtime error:", "terminate called",
                        "Segmentation fault"})
        if (line.find(mark) != std::string::npos) {
          problems_.push_back(file.filename().string() + ":"
                              + std::to_string(line_no) + ": " + line);
          break;
        }
    }
  }

  run_settings settings_;
  test::bridge_hosts net_;
  std::string dir_;
  std::unique_ptr<child_process> relay_;
  std::unique_ptr<entity_members> entities_;
  bool partitioned_ = false;
  std::vector<std::unique_ptr<child_process>> nodes_;
  std::vector<int> restarts_;
  std::vector<clock::time_point> started_;
  std::vector<bool> warmed_;
  size_t stopped_ = hosts;
  int64_t stopped_since_ = 0;
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> paused_;
  std::vector<std::string> applied_;
  std::map<std::string, int> by_kind_;
  std::vector<std::string> problems_;
};

TEST(chaos, SeededFaultsUnderLoadKeepEveryInvariant) {
  FERRY_RUN_WITH_NETWORK_NAMESPACES();
  auto settings = settings_from_environment();
  chaos_run sut{settings};
  if (auto why = sut.set_up(); !why.empty())
    FERRY_SKIP_OR_FAIL(why);
  if (auto missing = sut.missing_kinds(); !missing.empty())
    FERRY_SKIP_OR_FAIL("this kernel cannot inject the fault kinds: "
                       + missing);
  auto schedule = make_schedule(settings.seed, settings.phase.count(), hosts,
                                delay_host);
  if (!settings.faults)
    schedule.clear();
  std::cout << "seed " << settings.seed << ", " << schedule.size()
            << " faults over " << settings.phase.count() / 1000
            << " s, histories in " << sut.dir() << '\n';
  ASSERT_EQ(sut.start(), "");
  ASSERT_TRUE(sut.wait_all_linked(60s)) << "the nodes did not link up";
  sut.run(schedule);
  sut.finish();
  std::vector<violation> found;
  auto all = sut.histories(found);
  check_options options;
  options.paused = sut.paused();
  for (auto& v : check(all, options))
    found.push_back(v);
  auto entity_histories = sut.entities().histories(found);
  for (auto& v : check_entities(entity_histories))
    found.push_back(v);
  auto s = summarize(all);
  auto problems = sut.problems();
  problems.insert(problems.end(), sut.entities().problems().begin(),
                  sut.entities().problems().end());
  std::cout << "faults:";
  for (auto& [kind, n] : sut.by_kind())
    std::cout << ' ' << kind << '=' << n;
  std::cout << "\nchecked: " << render(s) << "\nerrors: " << render_errors(s)
            << "\nentities: " << render(summarize_entities(entity_histories))
            << " (" << sut.entities().incarnations()
            << " member incarnations)\n"
            << "violations: " << found.size() + problems.size() << '\n';
  if (found.empty() && problems.empty()) {
    std::filesystem::remove_all(sut.dir());
    return;
  }
  std::string report = "seed " + std::to_string(settings.seed)
                       + " (FERRY_CHAOS_SEED), faults as applied:\n";
  for (auto& f : sut.applied())
    report += "  " + f + "\n";
  for (auto& p : problems)
    report += "run: " + p + "\n";
  for (auto& v : found)
    report += render(v) + "\n";
  report += "histories: " + sut.dir();
  FAIL() << report;
}

} // namespace
} // namespace ferry::chaos
