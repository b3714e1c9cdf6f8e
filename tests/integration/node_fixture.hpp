// The fixture of the multi-process node tests: a local node in the test
// process and peers (ferry_test_node) as child processes, all on a store name
// of the test's own that is removed at the end.
#pragma once

#include "test_types.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/test/child_process.hpp"
#include "ferry/test/test_bytes.hpp"

#include "ferry/store/object_store.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace ferry::test {

using namespace std::chrono_literals;

inline std::atomic<int> store_counter{0};

/// Names a test instance after its family ("cereal.json" → "cereal_json").
inline std::string
family_test_name(const testing::TestParamInfo<std::string>& info) {
  auto name = info.param;
  for (auto& ch : name)
    if (ch == '.')
      ch = '_';
  return name;
}

/// One peer process and the port it listens on.
struct peer {
  std::unique_ptr<child_process> process;
  uint16_t port = 0;

  /// Returns the peer's "link" lines (see test_node.cpp), keyed by peer name.
  std::map<std::string, std::string> stats() {
    std::map<std::string, std::string> result;
    process->write_line("stats");
    for (;;) {
      auto line = process->read_line(10s);
      if (!line || *line == "end")
        break;
      std::istringstream in{*line};
      std::string word;
      std::string name;
      in >> word >> name;
      if (word == "link")
        result[name] = *line;
    }
    return result;
  }
};

class node_fixture : public testing::Test {
protected:
  node_fixture()
    : store_name_("ferry-it-" + std::to_string(getpid()) + "-"
                  + std::to_string(store_counter++)) {
    // nop
  }

  ~node_fixture() override {
    for (auto& p : peers_)
      p.process->close_stdin();
    for (auto& p : peers_)
      p.process->wait(10s);
    local_.reset();
    static_cast<void>(ferry::store::object_store::remove(store_name_));
    static_cast<void>(ferry::store::object_store::remove(store_name_ + "-b"));
    for (auto& name : own_stores_)
      static_cast<void>(ferry::store::object_store::remove(name));
  }

  /// Starts a peer named `name` with extra flags.
  peer& start_peer(const std::string& name, std::vector<std::string> flags = {},
                   bool own_store = false) {
    return start_peer_with_store(
      name, std::move(flags), own_store ? store_name_ + "-b" : store_name_);
  }

  /// Starts a peer named `name` with a store of its own, as a node on a
  /// host of its own would have.
  peer& start_peer_on_own_host(const std::string& name) {
    own_stores_.push_back(store_name_ + "-" + name);
    return start_peer_with_store(name, {}, own_stores_.back());
  }

  /// Starts a peer named `name` with extra flags on store `store`.
  peer& start_peer_with_store(const std::string& name,
                              std::vector<std::string> flags,
                              const std::string& store) {
    flags.push_back("--ferry.node-name=" + name);
    flags.push_back("--ferry.store.name=" + store);
    flags.push_back("--ferry.store.capacity=" + std::to_string(store_bytes_));
    auto proc = std::make_unique<child_process>(FERRY_TEST_NODE, flags);
    auto port = proc->wait_for("port ");
    EXPECT_TRUE(port) << "peer " << name << " did not start";
    peers_.push_back({std::move(proc),
                      static_cast<uint16_t>(port ? std::stoi(*port) : 0)});
    return peers_.back();
  }

  /// Starts the local node (after configuring `cfg`).
  ferry::node& local() {
    if (!local_) {
      cfg.node_name = "local";
      cfg.store_name = store_name_;
      cfg.store_capacity = store_bytes_;
      ferry::test::register_test_types(cfg);
      auto n = ferry::node::start(cfg);
      EXPECT_TRUE(n) << ferry::render(n.error());
      local_ = std::move(*n);
    }
    return *local_;
  }

  /// Sends a request from a fresh scoped actor and returns the reply.
  template <class Result, class... Ts>
  caf::expected<Result> ask(const caf::actor& whom, Ts&&... xs) {
    return ask_within<Result>(30s, whom, std::forward<Ts>(xs)...);
  }

  /// Like `ask`, with a timeout of `timeout`.
  template <class Result, class... Ts>
  caf::expected<Result> ask_within(std::chrono::seconds timeout,
                                   const caf::actor& whom, Ts&&... xs) {
    caf::scoped_actor self{local().system()};
    caf::expected<Result> result{caf::error{}};
    self->request(whom, timeout, std::forward<Ts>(xs)...)
      .receive([&](Result& x) { result = std::move(x); },
               [&](caf::error& err) { result = std::move(err); });
    return result;
  }

  ferry::node_config cfg;
  uint64_t store_bytes_ = uint64_t{256} << 20;
  std::string store_name_;
  /// Stores of peers on hosts of their own (start_peer_on_own_host).
  std::vector<std::string> own_stores_;
  std::deque<peer> peers_; // deque: references stay valid as peers start
  std::unique_ptr<ferry::node> local_;
};

} // namespace ferry::test
