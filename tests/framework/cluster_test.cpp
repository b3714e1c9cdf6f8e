// Nodes of one process that form a cluster over loopback: joining through
// seeds, one view on every node, refusal of another cluster's node, a
// graceful leave, a node that vanishes becoming unreachable and downed,
// and the member events a watcher hears. Time is real (gossip and
// heartbeats every 50 ms); each wait polls for its condition and gives up
// after 20 s.
#include "two_nodes.hpp"

#include "ferry/test/eventually.hpp"
#include "ferry/test/ports.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>

namespace ferry::test {
namespace {

using namespace std::chrono_literals;

/// Waits up to 20 s for `pred`; returns whether it held.
template <class Pred>
bool eventually(Pred pred) {
  return ferry::test::eventually(pred, 20s);
}

/// Returns how many members `n` sees in `status`.
size_t count(const ferry::node& n, ferry::member_status status) {
  size_t k = 0;
  for (auto& m : n.cluster().members())
    if (m.status == status)
      ++k;
  return k;
}

class cluster : public testing::Test {
protected:
  /// Starts `k` nodes named a, b, ... in cluster `name` with every node's
  /// address as a seed (a's first).
  void start(size_t k, const std::string& name = "test") {
    port_block ports{k};
    for (size_t i = 0; i < k; ++i)
      addresses.push_back("127.0.0.1:" + std::to_string(ports[i]));
    ports.release();
    for (size_t i = 0; i < k; ++i)
      start_one(i, name, addresses);
  }

  ferry::node* start_one(size_t i, const std::string& name,
                         const std::vector<std::string>& seeds) {
    while (cfgs.size() <= i)
      cfgs.push_back(std::make_unique<ferry::node_config>());
    auto& cfg = *cfgs[i];
    cfg.cluster.name = name;
    cfg.cluster.address = addresses[i];
    cfg.cluster.seeds = seeds;
    cfg.cluster.seed_timeout = 300ms;
    cfg.cluster.gossip_interval = 50ms;
    cfg.cluster.heartbeat_interval = 50ms;
    cfg.cluster.acceptable_pause = 200ms;
    cfg.cluster.stable_after = 500ms;
    cfg.log_sink = [this](const std::string& line) {
      std::lock_guard<std::mutex> guard{log_mtx};
      log.push_back(line);
    };
    names.push_back(std::string(1, static_cast<char>('a' + i)));
    auto n = make_node(names.back().c_str(), cfg);
    while (nodes.size() <= i)
      nodes.emplace_back();
    nodes[i] = std::move(n);
    return nodes[i].get();
  }

  bool logged(const std::string& part) {
    std::lock_guard<std::mutex> guard{log_mtx};
    for (auto& line : log)
      if (line.find(part) != std::string::npos)
        return true;
    return false;
  }

  ~cluster() override {
    for (auto i = nodes.rbegin(); i != nodes.rend(); ++i)
      i->reset();
  }

  std::vector<std::string> addresses;
  std::vector<std::string> names;
  std::vector<std::unique_ptr<ferry::node_config>> cfgs;
  std::vector<std::unique_ptr<ferry::node>> nodes;
  std::mutex log_mtx;
  std::vector<std::string> log;
};

TEST_F(cluster, ThreeNodesJoinThroughTheirSeedsAndAllSeeEveryoneUp) {
  start(3);
  for (auto& n : nodes)
    ASSERT_TRUE(n);
  for (auto& n : nodes)
    EXPECT_TRUE(eventually([&] {
      return count(*n, ferry::member_status::up) == 3;
    })) << n->name() << " sees " << n->cluster().members().size() << " members";
  // The oldest is the first seed, which formed the cluster.
  for (auto& m : nodes[1]->cluster().members()) {
    if (m.address == addresses[0]) {
      EXPECT_EQ(m.up_number, 1u);
    }
  }
}

TEST_F(cluster, ANodeOfAnotherClusterIsRefusedNamingBothClusters) {
  start(1, "alpha");
  ASSERT_TRUE(eventually(
    [&] { return count(*nodes[0], ferry::member_status::up) == 1; }));
  addresses.push_back("127.0.0.1:" + std::to_string(free_port()));
  auto* stranger = start_one(1, "beta", {addresses[0]});
  ASSERT_NE(stranger, nullptr);
  EXPECT_TRUE(eventually([&] {
    return logged("cluster_refused") && logged("'beta'") && logged("'alpha'");
  }));
  EXPECT_EQ(count(*nodes[0], ferry::member_status::up), 1u);
  EXPECT_EQ(nodes[0]->cluster().members().size(), 1u);
  EXPECT_EQ(count(*stranger, ferry::member_status::up), 0u);
}

TEST_F(cluster, ALeavingNodeIsRemovedEverywhere) {
  start(3);
  for (auto& n : nodes)
    ASSERT_TRUE(eventually(
      [&] { return count(*n, ferry::member_status::up) == 3; }));
  nodes[2]->cluster().leave();
  for (size_t i = 0; i < 2; ++i)
    EXPECT_TRUE(eventually([&] { return nodes[i]->cluster().members().size() == 2; }))
      << names[i];
}

TEST_F(cluster, ANodeThatVanishesIsUnreachableThenDownedAndRemoved) {
  start(3);
  for (auto& n : nodes)
    ASSERT_TRUE(eventually(
      [&] { return count(*n, ferry::member_status::up) == 3; }));
  // A watcher on a hears the events.
  struct seen_t {
    std::mutex mtx;
    std::set<std::string> kinds;
  };
  auto seen = std::make_shared<seen_t>();
  auto note = [seen](const char* what) {
    std::lock_guard<std::mutex> guard{seen->mtx};
    seen->kinds.insert(what);
  };
  auto watcher = nodes[0]->system().spawn([note]() -> caf::behavior {
    return {
      [note](const ferry::member_unreachable&) { note("unreachable"); },
      [note](const ferry::member_down&) { note("down"); },
      [note](const ferry::member_removed&) { note("removed"); },
      [](const ferry::member_up&) {},
      [](const ferry::member_reachable&) {},
      [](const ferry::members_converged&) {},
    };
  });
  nodes[0]->cluster().watch_members(watcher);
  nodes[2].reset();
  for (size_t i = 0; i < 2; ++i)
    EXPECT_TRUE(eventually([&] { return nodes[i]->cluster().members().size() == 2; }))
      << names[i];
  EXPECT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> guard{seen->mtx};
    return seen->kinds.size() == 3;
  })) << "heard: " << [&] {
    std::lock_guard<std::mutex> guard{seen->mtx};
    std::string out;
    for (auto& k : seen->kinds)
      out += k + " ";
    return out;
  }();
  caf::anon_send_exit(watcher, caf::exit_reason::user_shutdown);
}

TEST_F(cluster, RegisteredActorsAreFoundOnEveryMemberAndLeaveWithTheirActor) {
  start(3);
  for (auto& n : nodes)
    ASSERT_TRUE(eventually(
      [&] { return count(*n, ferry::member_status::up) == 3; }));
  // A subscriber on c follows the key.
  struct listing_t {
    std::mutex mtx;
    std::vector<size_t> sizes;
  };
  auto listings = std::make_shared<listing_t>();
  auto subscriber = nodes[2]->system().spawn([listings]() -> caf::behavior {
    return {
      [listings](const ferry::registry_listing& x) {
        std::lock_guard<std::mutex> guard{listings->mtx};
        listings->sizes.push_back(x.actors.size());
      },
    };
  });
  nodes[2]->cluster().subscribe_actors("workers", subscriber);
  auto worker_a = nodes[0]->system().spawn(
    []() -> caf::behavior { return {[](int32_t x) { return x * 2; }}; });
  auto worker_b = nodes[1]->system().spawn(
    []() -> caf::behavior { return {[](int32_t x) { return x * 3; }}; });
  ASSERT_EQ(nodes[0]->cluster().register_actor("workers", worker_a), true);
  ASSERT_EQ(nodes[0]->cluster().register_actor("workers", worker_a), false);
  ASSERT_EQ(nodes[1]->cluster().register_actor("workers", worker_b), true);
  auto found = [&](size_t i) {
    auto xs = nodes[i]->cluster().find_actors("workers");
    return xs ? xs->size() : size_t{999};
  };
  for (size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(eventually([&] { return found(i) == 2; })) << names[i];
  // A worker found on c answers from a's node.
  auto xs = nodes[2]->cluster().find_actors("workers");
  ASSERT_TRUE(xs);
  caf::scoped_actor self{nodes[2]->system()};
  int32_t sum = 0;
  for (auto& w : *xs)
    self->request(w, 5s, int32_t{7}).receive([&](int32_t y) { sum += y; },
                                            [&](caf::error& err) {
                                              ADD_FAILURE() << ferry::render(err);
                                            });
  EXPECT_EQ(sum, 14 + 21);
  // The worker on a ends: it leaves the registry everywhere.
  caf::anon_send_exit(worker_a, caf::exit_reason::user_shutdown);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(eventually([&] { return found(i) == 1; })) << names[i];
  // b vanishes: its worker goes with it (the test lets go of its handle,
  // so that b's actor system does not wait for the worker to end).
  worker_b = caf::actor{};
  nodes[1].reset();
  for (size_t i : {size_t{0}, size_t{2}})
    EXPECT_TRUE(eventually([&] { return found(i) == 0; })) << names[i];
  EXPECT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> guard{listings->mtx};
    return !listings->sizes.empty() && listings->sizes.back() == 0
           && std::find(listings->sizes.begin(), listings->sizes.end(), 2)
                != listings->sizes.end();
  }));
  caf::anon_send_exit(subscriber, caf::exit_reason::user_shutdown);
}

TEST_F(cluster, ANodeWithoutAClusterRefusesRegistryCalls) {
  ferry::node_config cfg;
  auto n = make_node("lonely", cfg);
  ASSERT_TRUE(n);
  auto sut = n->cluster().find_actors("workers");
  ASSERT_FALSE(sut);
  EXPECT_EQ(sut.error(), ferry::errc::cluster_refused);
  EXPECT_TRUE(n->cluster().members().empty());
}

TEST_F(cluster, ABadClusterSettingIsRefusedAtStart) {
  ferry::node_config cfg;
  cfg.node_name = "x";
  cfg.store_enabled = false;
  cfg.cluster.name = "test";
  cfg.cluster.address = "127.0.0.1";
  cfg.cluster.seeds = {"127.0.0.1:1"};
  auto sut = ferry::node::start(cfg);
  ASSERT_FALSE(sut);
  EXPECT_EQ(sut.error(), ferry::errc::invalid_config);
  EXPECT_NE(ferry::render(sut.error()).find("host:port"), std::string::npos);
}

} // namespace
} // namespace ferry::test
