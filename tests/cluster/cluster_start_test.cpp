// Nodes that start together: four member processes (cluster_member.cpp)
// each connect to the other three at the same moment, send each a one-way
// message right after `remote_actor` returns, then a request. Every ordered
// pair must answer its request within 10 s and every one-way message must
// arrive, however the connects interleave (crossing connections that CAF
// closes on both sides, a link whose far side is still being made).
//
// FERRY_CLUSTER_TRIALS sets how many clusters start one after the other
// (default 20); FERRY_CLUSTER_BUSY_LOOPS starts that many busy threads in
// the test process for the whole run, to load the cores (the stress mode:
// 1,000 trials with 4 busy loops).
#include "ferry/test/child_process.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ferry::test {
namespace {

using namespace std::chrono_literals;

constexpr size_t members = 4;

/// Concatenates `xs` (GCC 12 warns falsely on chains of string `+`).
template <class... Ts>
std::string text(const Ts&... xs) {
  std::ostringstream out;
  (out << ... << xs);
  return out.str();
}

size_t env_or(const char* name, size_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::stoul(value) : fallback;
}

/// Threads spinning until destroyed (FERRY_CLUSTER_BUSY_LOOPS).
class busy_loops {
public:
  explicit busy_loops(size_t n) {
    for (size_t i = 0; i < n; ++i)
      threads_.emplace_back([this] {
        volatile uint64_t x = 0;
        while (!stop_.load(std::memory_order_relaxed))
          x = x + 1;
      });
  }

  ~busy_loops() {
    stop_ = true;
    for (auto& t : threads_)
      t.join();
  }

private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

/// What one trial found wrong, one line per problem (empty: all met).
std::vector<std::string> run_trial(size_t trial) {
  std::vector<std::string> problems;
  std::vector<std::unique_ptr<child_process>> procs;
  std::vector<std::string> ports;
  for (size_t i = 0; i < members; ++i) {
    procs.emplace_back(std::make_unique<child_process>(
      FERRY_CLUSTER_MEMBER,
      std::vector<std::string>{text("--ferry.node-name=m", i),
                               "--ferry.store.disabled"}));
    auto port = procs.back()->wait_for("port ");
    if (!port) {
      problems.push_back(text("member m", i, " did not start"));
      return problems;
    }
    ports.push_back(*port);
  }
  // Everyone starts at the same moment, shortly after the last "go".
  auto start = std::chrono::system_clock::now() + 300ms;
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                  start.time_since_epoch())
                  .count();
  for (size_t i = 0; i < members; ++i) {
    std::ostringstream go;
    go << "go " << micros;
    for (size_t j = 0; j < members; ++j)
      if (j != i)
        go << ' ' << ports[j];
    procs[i]->write_line(go.str());
  }
  auto name_of_port = [&](const std::string& port) {
    for (size_t j = 0; j < members; ++j)
      if (ports[j] == port)
        return text("m", j);
    return text("port ", port);
  };
  auto where = [&](size_t i) {
    return text("trial ", trial, ", m", i);
  };
  for (size_t i = 0; i < members; ++i) {
    for (size_t k = 0; k + 1 < members; ++k) {
      auto line = procs[i]->wait_for("result ", 60s);
      if (!line) {
        problems.push_back(text(where(i), ": no result"));
        break;
      }
      std::istringstream in{*line};
      std::string port;
      std::string verdict;
      in >> port >> verdict;
      std::string rest;
      std::getline(in, rest);
      if (verdict != "ok")
        problems.push_back(text(where(i), " to ", name_of_port(port), ":", rest));
      else if (std::stoul(rest) > 10'000)
        problems.push_back(text(where(i), " to ", name_of_port(port),
                                ": answered after", rest, " ms"));
    }
    if (!procs[i]->wait_for("done", 10s))
      problems.push_back(text(where(i), ": not done"));
  }
  for (size_t i = 0; i < members; ++i) {
    procs[i]->write_line("report");
    auto received = procs[i]->wait_for("received", 10s);
    std::set<std::string> names;
    if (received) {
      std::istringstream in{*received};
      for (std::string name; in >> name;)
        names.insert(name);
    }
    for (size_t j = 0; j < members; ++j)
      if (j != i && names.count(text("m", j)) == 0)
        problems.push_back(text(where(i), ": the one-way message of m", j,
                                " did not arrive"));
    size_t links = 0;
    while (auto line = procs[i]->read_line(10s)) {
      if (*line == "end")
        break;
      ++links;
      if (line->find("unasked=0") == std::string::npos)
        problems.push_back(text(where(i), ": ", *line));
    }
    // One link per pair: crossed connects keep one connection.
    if (links != members - 1)
      problems.push_back(text(where(i), ": ", links, " links to ", members - 1,
                              " other members"));
  }
  for (auto& proc : procs) {
    proc->close_stdin();
    auto status = proc->wait(20s);
    if (!status.ok())
      problems.push_back(text("trial ", trial, ": a member ended with ",
                              to_string(status)));
  }
  return problems;
}

TEST(cluster_start, MembersConnectingToEachOtherAtOnceAllMeet) {
  // Arrange
  auto trials = env_or("FERRY_CLUSTER_TRIALS", 20);
  busy_loops load{env_or("FERRY_CLUSTER_BUSY_LOOPS", 0)};
  // Act
  size_t failed = 0;
  std::vector<std::string> first_problems;
  for (size_t trial = 0; trial < trials; ++trial) {
    auto problems = run_trial(trial);
    if (!problems.empty())
      ++failed;
    for (auto& x : problems)
      if (first_problems.size() < 20)
        first_problems.push_back(x);
  }
  // Assert
  std::string details;
  for (auto& x : first_problems)
    details.append("\n  ").append(x);
  EXPECT_EQ(failed, 0u) << failed << " of " << trials
                        << " trials failed:" << details;
  std::cout << "[ cluster  ] " << trials - failed << " of " << trials
            << " trials met" << std::endl;
}

} // namespace
} // namespace ferry::test
