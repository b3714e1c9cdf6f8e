// Threads racing through one store of each kind (entities/state_store):
// saves of one key with the versions each thread loaded let exactly one
// save per version win and lose nothing, and owners asking for one shard
// at once get it once. (Processes racing through one SQLite file:
// sqlite_store_test.cpp.)
#include "store_backends.hpp"

#include <barrier>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace ferry::entities_test;
using namespace std::chrono_literals;
using ferry::errc;
using ferry::render;
using ferry::detail::entities::state_store_config;

namespace {

template <class Backend>
class store_concurrency_test : public store_fixture<Backend> {};

} // namespace

TYPED_TEST_SUITE(store_concurrency_test, backends, backend_names);

TYPED_TEST(store_concurrency_test, RacingSavesLetExactlyOneWinPerVersion) {
  // Arrange
  constexpr int threads = 4;
  constexpr int rounds = 25;
  state_store_config cfg;
  cfg.pool_size = 3; // fewer connections than threads: some wait for one
  auto sut = this->open_sut(cfg);
  ASSERT_NE(sut, nullptr);
  std::mutex mtx;
  std::map<uint64_t, std::string> winners; // version -> what its save wrote
  std::vector<std::string> failures;
  int conflicts = 0;
  std::barrier start{threads};
  // Act
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int r = 0; r < rounds; ++r) {
        auto loaded = sut->load("counter", "contended");
        if (!loaded) {
          std::lock_guard guard{mtx};
          failures.push_back(render(loaded.error()));
          continue;
        }
        std::this_thread::sleep_for(500us); // the activation works
        auto text = "t" + std::to_string(t) + "r" + std::to_string(r);
        auto saved = sut->save("counter", "contended", loaded->version, "raw",
                               bytes_of(text));
        std::lock_guard guard{mtx};
        if (saved) {
          if (!winners.emplace(*saved, text).second)
            failures.push_back("version " + std::to_string(*saved) +
                               " won twice");
        } else if (has_code(saved.error(), errc::state_conflict)) {
          ++conflicts;
        } else {
          failures.push_back(render(saved.error()));
        }
      }
    });
  for (auto& w : workers)
    w.join();
  // Assert
  EXPECT_TRUE(failures.empty()) << failures.front();
  ASSERT_FALSE(winners.empty());
  EXPECT_EQ(winners.size() + conflicts, size_t{threads * rounds});
  EXPECT_EQ(winners.begin()->first, 1u);
  EXPECT_EQ(winners.rbegin()->first, winners.size()); // 1..N, none missing
  auto final_state = sut->load("counter", "contended");
  ASSERT_TRUE(final_state) << render(final_state.error());
  EXPECT_EQ(final_state->version, winners.size());
  EXPECT_EQ(final_state->bytes, bytes_of(winners.rbegin()->second));
}

TYPED_TEST(store_concurrency_test, OwnersAskingForOneShardAtOnceGetItOnce) {
  // Arrange
  constexpr int threads = 4;
  constexpr uint32_t shards = 10;
  auto sut = this->open_sut();
  ASSERT_NE(sut, nullptr);
  std::mutex mtx;
  std::map<uint32_t, std::vector<std::string>> holders;
  std::vector<std::string> failures;
  std::barrier start{threads};
  // Act
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      auto owner = "member-" + std::to_string(t);
      for (uint32_t shard = 0; shard < shards; ++shard) {
        start.arrive_and_wait();
        auto grant = sut->acquire(shard, owner, 30s, 0ms);
        std::lock_guard guard{mtx};
        if (!grant)
          failures.push_back(render(grant.error()));
        else if (grant->held)
          holders[shard].push_back(owner);
      }
    });
  for (auto& w : workers)
    w.join();
  // Assert
  EXPECT_TRUE(failures.empty()) << failures.front();
  for (uint32_t shard = 0; shard < shards; ++shard)
    EXPECT_EQ(holders[shard].size(), 1u) << "shard " << shard;
  auto all = sut->leases();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), shards);
  for (auto& lease : *all) {
    EXPECT_EQ(lease.epoch, 1u);
    ASSERT_EQ(holders[lease.shard].size(), 1u);
    EXPECT_EQ(lease.holder, holders[lease.shard].front());
  }
}
