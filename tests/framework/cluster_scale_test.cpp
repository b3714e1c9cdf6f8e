// Clusters of 4, 8, 16 and 32 nodes in one process over loopback, with the
// cluster's default intervals (gossip and heartbeats every 1 s) and two
// seeds: every node starts at once, and the test measures the time from the
// first start until every node sees all nodes up and the view converged.
// Each size must converge (the test gives up after 30 s, a guard against a
// hang, not a speed target); the times are printed as a table
// ("[ scale ] <nodes> nodes: <ms> ms", shown by `ctest --verbose`). Each node
// runs a one-thread scheduler and one I/O thread, without a store.
#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/test/convergence_watch.hpp"
#include "ferry/test/ports.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace ferry::test {
namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

/// Returns whether `n` sees `k` members, all up and reachable.
bool sees_all_up(const ferry::node& n, size_t k) {
  auto members = n.cluster().members();
  return members.size() == k
         && std::all_of(members.begin(), members.end(), [](auto& m) {
              return m.status == ferry::member_status::up && m.reachable;
            });
}

/// Starts `k` nodes (the first two are the seeds) and returns the
/// milliseconds until all see `k` members up in a converged view, or -1
/// after 30 s.
int64_t converge(size_t k) {
  port_block ports{k};
  std::vector<std::string> addresses;
  for (size_t i = 0; i < k; ++i)
    addresses.push_back("127.0.0.1:" + std::to_string(ports[i]));
  std::vector<std::unique_ptr<ferry::node_config>> cfgs;
  std::vector<std::unique_ptr<ferry::node>> nodes;
  std::vector<std::shared_ptr<std::atomic<bool>>> converged;
  std::vector<caf::actor> watchers;
  ports.release();
  auto begin = clock::now();
  for (size_t i = 0; i < k; ++i) {
    auto& cfg = *cfgs.emplace_back(std::make_unique<ferry::node_config>());
    cfg.node_name = "s" + std::to_string(i + 1);
    cfg.store_enabled = false;
    cfg.set("scheduler.max-threads", 1);
    cfg.cluster.name = "scale";
    cfg.cluster.address = addresses[i];
    cfg.cluster.seeds = {addresses[0], addresses[1]};
    auto n = ferry::node::start(cfg);
    EXPECT_TRUE(n) << cfg.node_name << ": " << ferry::render(n.error());
    if (!n)
      return -1;
    auto flag = std::make_shared<std::atomic<bool>>(false);
    watchers.push_back((*n)->system().spawn(convergence_watch, flag));
    (*n)->cluster().watch_members(watchers.back());
    converged.push_back(std::move(flag));
    nodes.push_back(std::move(*n));
  }
  int64_t result = -1;
  while (clock::now() - begin < 30s) {
    bool all = true;
    for (size_t i = 0; i < k && all; ++i)
      all = converged[i]->load() && sees_all_up(*nodes[i], k);
    if (all) {
      result = std::chrono::duration_cast<std::chrono::milliseconds>(
                 clock::now() - begin)
                 .count();
      break;
    }
    std::this_thread::sleep_for(20ms);
  }
  if (result < 0)
    for (auto& n : nodes)
      ADD_FAILURE() << n->name() << " sees " << n->cluster().members().size()
                    << " members";
  for (auto& w : watchers)
    caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  for (auto i = nodes.rbegin(); i != nodes.rend(); ++i)
    i->reset();
  return result;
}

} // namespace

TEST(cluster_scale, ClustersOf4To32NodesConverge) {
  for (size_t k : {4, 8, 16, 32}) {
    auto ms = converge(k);
    ASSERT_GE(ms, 0) << k << " nodes never converged";
    std::cout << "[ scale ] " << k << " nodes: " << ms << " ms" << std::endl;
  }
}

} // namespace ferry::test
