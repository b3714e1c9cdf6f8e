// Entities on the members of a cluster in one process (loopback links, one
// SQLite file, short intervals): shards spread over the members, an entity
// keeps its state when its shard moves to a member that joins, to the
// others when its member leaves or stops, and what one sender sends one
// entity arrives complete and in order through those moves. Every
// activation is logged with its times: no two activations of one key
// overlap.
#include "ferry/entity.hpp"
#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/test/eventually.hpp"
#include "ferry/test/ports.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ferry::entities_test {
namespace {

using namespace std::chrono_literals;
using list_atom = caf::atom_constant<caf::atom("list")>;

/// The state of a `seq`: what it was sent, in order.
struct seq_state {
  std::vector<int64_t> got;
};

/// One activation: on which node, from when to when.
struct activation {
  std::string key;
  std::string node;
  std::chrono::steady_clock::time_point start;
  std::optional<std::chrono::steady_clock::time_point> stop;
};

/// Every activation of the test's entities, on every node.
struct activation_log {
  std::mutex mtx;
  std::vector<activation> all;

  size_t started(const std::string& key, const std::string& node) {
    std::lock_guard<std::mutex> guard{mtx};
    all.push_back({key, node, std::chrono::steady_clock::now(), {}});
    return all.size() - 1;
  }

  void stopped(size_t i) {
    std::lock_guard<std::mutex> guard{mtx};
    all[i].stop = std::chrono::steady_clock::now();
  }

  /// Returns the activations of `key`, as "node(start..stop)" in ms since
  /// the first one.
  std::string of(const std::string& key) {
    std::lock_guard<std::mutex> guard{mtx};
    std::string result;
    if (all.empty())
      return result;
    auto t0 = all.front().start;
    auto ms = [&](auto t) {
      return std::to_string(
        std::chrono::duration_cast<std::chrono::milliseconds>(t - t0).count());
    };
    for (auto& a : all)
      if (a.key == key)
        result += a.node + "(" + ms(a.start) + ".." +
                  (a.stop ? ms(*a.stop) : std::string{"-"}) + ") ";
    return result;
  }

  /// Returns a description of two activations of one key that overlap, or
  /// an empty string.
  std::string overlap() {
    std::lock_guard<std::mutex> guard{mtx};
    auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < all.size(); ++i)
      for (size_t j = i + 1; j < all.size(); ++j) {
        auto& a = all[i];
        auto& b = all[j];
        if (a.key != b.key)
          continue;
        auto a_end = a.stop.value_or(now);
        auto b_end = b.stop.value_or(now);
        if (a.start < b_end && b.start < a_end)
          return "key " + a.key + " active on " + a.node + " and " + b.node +
                 " at once";
      }
    return {};
  }
};

/// Appends what it is sent (one-way) and saves every tenth time; `list`
/// answers everything so far.
caf::behavior seq_behavior(ferry::entity<seq_state>* self, activation_log* log,
                           std::string node) {
  auto i = log->started(self->key(), node);
  self->attach_functor([log, i](const caf::error&) { log->stopped(i); });
  return {
    [self](int64_t x) {
      self->state().got.push_back(x);
      if (self->state().got.size() % 10 == 0)
        self->save();
    },
    [self](list_atom) { return self->state().got; },
  };
}

class entity_cluster : public testing::Test {
protected:
  entity_cluster() {
    dir = std::filesystem::temp_directory_path() /
          ("ferry-entity-cluster-" + std::to_string(::getpid()) + "-" +
           testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }

  ~entity_cluster() override {
    for (auto i = nodes.rbegin(); i != nodes.rend(); ++i)
      i->reset();
    std::filesystem::remove_all(dir);
  }

  /// Reserves addresses for `k` members (the first two are the seeds).
  void plan(size_t k) {
    ferry::test::port_block ports{k};
    for (size_t i = 0; i < k; ++i)
      addresses.push_back("127.0.0.1:" + std::to_string(ports[i]));
    ports.release();
    cfgs.resize(k);
    nodes.resize(k);
  }

  /// Starts member `i` (named a, b, ...).
  ferry::node& start(size_t i) {
    auto made = ferry::node::start(configure(i));
    EXPECT_TRUE(made) << ferry::render(made.error());
    nodes[i] = std::move(*made);
    return *nodes[i];
  }

  /// Makes the config of member `i`.
  ferry::node_config& configure(size_t i) {
    auto name = std::string(1, static_cast<char>('a' + i));
    cfgs[i] = std::make_unique<ferry::node_config>();
    auto& cfg = *cfgs[i];
    cfg.node_name = name;
    cfg.store_enabled = false;
    cfg.cluster.name = "entities";
    cfg.cluster.address = addresses[i];
    cfg.cluster.seeds = {addresses[0], addresses[1]};
    cfg.cluster.seed_timeout = 300ms;
    cfg.cluster.gossip_interval = 50ms;
    cfg.cluster.heartbeat_interval = 50ms;
    cfg.cluster.acceptable_pause = 200ms;
    cfg.cluster.stable_after = 1s;
    cfg.entities.store = "sqlite:" + (dir / "entities.db").string();
    cfg.entities.shards = 16;
    cfg.entities.lease = 1s;
    cfg.entities.hand_off_timeout = 3s;
    cfg.log_sink = [](const std::string&) {
    };
    cfg.add_message_type<std::vector<int64_t>>("test.i64s");
    cfg.add_entity_type<seq_state>(
      "seq", [this, name](ferry::entity<seq_state>* self) {
        return seq_behavior(self, &log, name);
      });
    return cfg;
  }

  /// Returns the shards the running members hold together.
  uint64_t shards_held() {
    uint64_t n = 0;
    for (auto& x : nodes)
      if (x)
        n += x->entities().stats().shards_held;
    return n;
  }

  /// Plans and starts `k` members.
  void start_all(size_t k) {
    plan(k);
    for (size_t i = 0; i < k; ++i)
      start(i);
  }

  /// Returns whether `k` members came up and hold every shard between them.
  bool settled(size_t k) {
    return ferry::test::eventually([&] { return all_up(k); }, 20s) &&
           ferry::test::eventually([&] { return shards_held() == 16; }, 20s);
  }

  /// Returns whether every running member sees `k` members up.
  bool all_up(size_t k) {
    for (auto& x : nodes) {
      if (!x)
        continue;
      size_t up = 0;
      for (auto& m : x->cluster().members())
        if (m.status == ferry::member_status::up)
          ++up;
      if (up != k)
        return false;
    }
    return true;
  }

  /// Sends `from`..`to` (exclusive) to key `key` through node `via`.
  void send(ferry::node& via, const std::string& key, int64_t from,
            int64_t to) {
    auto whom = via.entities().ref("seq", key);
    ASSERT_TRUE(whom);
    caf::scoped_actor self{via.system()};
    for (auto i = from; i < to; ++i)
      self->send(*whom, i);
  }

  /// Returns what key `key` got, asked through node `via`.
  std::vector<int64_t> list(ferry::node& via, const std::string& key) {
    auto whom = via.entities().ref("seq", key);
    EXPECT_TRUE(whom);
    caf::scoped_actor self{via.system()};
    std::vector<int64_t> result;
    self->request(*whom, 20s, list_atom::value)
      .receive([&](std::vector<int64_t>& x) { result = std::move(x); },
               [&](caf::error& err) {
                 ADD_FAILURE() << key << ": " << ferry::render(err);
               });
    return result;
  }

  /// Returns "ok" when `got` is 0..n-1, else where it first differs.
  static std::string check(const std::vector<int64_t>& got, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      if (static_cast<size_t>(i) >= got.size() || got[i] != i) {
        std::string around;
        for (auto j = std::max<int64_t>(0, i - 3);
             j < std::min<int64_t>(static_cast<int64_t>(got.size()), i + 5);
             ++j)
          around += std::to_string(got[j]) + " ";
        return "differs at " + std::to_string(i) + " of " +
               std::to_string(got.size()) + ": " + around;
      }
    return got.size() == static_cast<size_t>(n) ? "ok" : "too many";
  }

  static std::vector<int64_t> range(int64_t n) {
    std::vector<int64_t> result;
    for (int64_t i = 0; i < n; ++i)
      result.push_back(i);
    return result;
  }

  std::filesystem::path dir;
  std::vector<std::string> addresses;
  std::vector<std::unique_ptr<ferry::node_config>> cfgs;
  std::vector<std::unique_ptr<ferry::node>> nodes;
  activation_log log;
};

TEST_F(entity_cluster, ShardsSpreadAndEntitiesKeepTheirStateWhenAMemberJoins) {
  // Arrange: two members hold the 16 shards; 20 keys get 0..49 each.
  plan(3);
  start(0);
  start(1);
  ASSERT_TRUE(ferry::test::eventually([&] { return all_up(2); }, 20s));
  ASSERT_TRUE(
    ferry::test::eventually([&] { return shards_held() == 16; }, 20s));
  for (int k = 0; k < 20; ++k)
    send(*nodes[0], "k" + std::to_string(k), 0, 50);
  // Read through the sender: what it sent before is there.
  for (int k = 0; k < 20; ++k)
    ASSERT_EQ(check(list(*nodes[0], "k" + std::to_string(k)), 50), "ok");
  // Act: a third member joins; the keys get 50..99 through it.
  start(2);
  ASSERT_TRUE(ferry::test::eventually([&] { return all_up(3); }, 20s));
  auto moved = ferry::test::eventually(
    [&] {
      return nodes[2]->entities().stats().shards_held > 0 &&
             shards_held() == 16;
    },
    20s);
  for (int k = 0; k < 20; ++k)
    send(*nodes[2], "k" + std::to_string(k), 50, 100);
  // Assert: every key has everything, in order (read through the last
  // sender); no key ran twice at once.
  EXPECT_TRUE(moved);
  for (int k = 0; k < 20; ++k)
    EXPECT_EQ(check(list(*nodes[2], "k" + std::to_string(k)), 100), "ok")
      << "key k" << k << ": " << log.of("k" + std::to_string(k));
  EXPECT_EQ(log.overlap(), "");
}

TEST_F(entity_cluster, SendersKeepTheirOrderWhileTheHolderLeaves) {
  // Arrange: three members; a sender on a streams to 12 keys.
  start_all(3);
  ASSERT_TRUE(settled(3));
  // Act: b leaves half-way through the stream.
  for (int round = 0; round < 10; ++round) {
    if (round == 5)
      nodes[1]->cluster().leave();
    for (int k = 0; k < 12; ++k)
      send(*nodes[0], "k" + std::to_string(k), round * 20, round * 20 + 20);
  }
  auto handed = ferry::test::eventually(
    [&] { return nodes[1]->entities().stats().shards_held == 0; }, 30s);
  // Assert: every key got 0..199 in order (read through the sender).
  EXPECT_TRUE(handed);
  for (int k = 0; k < 12; ++k)
    EXPECT_EQ(check(list(*nodes[0], "k" + std::to_string(k)), 200), "ok")
      << "key k" << k << ": " << log.of("k" + std::to_string(k));
  EXPECT_EQ(log.overlap(), "");
}

TEST_F(entity_cluster, StoppedMembersEntitiesContinueElsewhereWithTheirState) {
  // Arrange
  start_all(3);
  ASSERT_TRUE(settled(3));
  for (int k = 0; k < 12; ++k)
    send(*nodes[0], "k" + std::to_string(k), 0, 30);
  // Act: c stops (its entities save, its leases go, the others hear of
  // it); more comes once they hold its shards.
  nodes[2].reset();
  ASSERT_TRUE(
    ferry::test::eventually([&] { return shards_held() == 16; }, 20s));
  for (int k = 0; k < 12; ++k)
    send(*nodes[0], "k" + std::to_string(k), 30, 60);
  // Assert: read by the sender's node (after what it sent).
  for (int k = 0; k < 12; ++k)
    EXPECT_EQ(check(list(*nodes[0], "k" + std::to_string(k)), 60), "ok")
      << "key k" << k << ": " << log.of("k" + std::to_string(k));
  EXPECT_EQ(log.overlap(), "");
}

TEST_F(entity_cluster, ALeaseLongerThanStableAfterIsRefused) {
  // Arrange: a lease that would outlast the time a killed member takes to
  // be downed (two planned: the config names two seeds).
  plan(2);
  auto& cfg = configure(0);
  cfg.entities.lease = 2s;
  // Act
  auto made = ferry::node::start(cfg);
  // Assert
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().code(),
            static_cast<uint8_t>(ferry::errc::invalid_config));
  auto text = ferry::render(made.error());
  EXPECT_NE(text.find("ferry.entities.lease"), std::string::npos) << text;
  EXPECT_NE(text.find("ferry.cluster.stable-after"), std::string::npos) << text;
}

} // namespace
} // namespace ferry::entities_test
