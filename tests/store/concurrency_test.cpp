// Stress tests: many threads creating, copying, transferring and dropping
// handles at once (label `concurrency`, run under TSan in CI). Every thread
// checks the bytes it reads; at the end the store must be empty again.
#include "ferry/store/in_band_scope.hpp"
#include "ferry/store/object_store.hpp"

#include "store_test_support.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

using namespace ferry::store;
using namespace ferry::store::test;

namespace {

constexpr int num_threads = 4;
constexpr int iterations = 2000;

TEST(store_concurrency, ManyThreadsCreateCopyAndDropHandles) {
  store_cleanup cleanup{small_config("conc", uint64_t{4} << 20)};
  cleanup.cfg.max_objects = 4096;
  cleanup.cfg.max_tickets = 1024;
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(sut);
  std::mutex shared_mtx;
  std::vector<object_ref> shared; // handles passed between threads
  std::vector<transfer_ticket> tickets;
  std::atomic<int> failures{0};
  auto work = [&](int index) {
    std::mt19937 gen{static_cast<unsigned>(index)};
    std::vector<object_ref> mine;
    for (int i = 0; i < iterations; ++i) {
      switch (gen() % 6) {
        case 0: { // put with a self-describing pattern
          auto size = 8 + gen() % 4000;
          auto seed = static_cast<uint32_t>(gen());
          auto bytes = pattern(size, seed);
          std::memcpy(bytes.data(), &seed, 4);
          auto ref = sut->put(bytes);
          if (!ref) {
            if (code_of(ref.error()) != errc::store_full
                && code_of(ref.error()) != errc::table_full)
              ++failures;
            break;
          }
          mine.push_back(std::move(*ref));
          break;
        }
        case 1: // copy one of mine to the shared pool
          if (!mine.empty()) {
            std::lock_guard guard{shared_mtx};
            shared.push_back(mine[gen() % mine.size()]);
          }
          break;
        case 2: { // take a handle from the shared pool, get it again by id
          object_ref ref;
          {
            std::lock_guard guard{shared_mtx};
            if (!shared.empty()) {
              ref = std::move(shared.back());
              shared.pop_back();
            }
          }
          if (ref) {
            auto again = sut->get(ref.id());
            if (!again || again->bytes().data() != ref.bytes().data())
              ++failures;
            uint32_t seed = 0;
            std::memcpy(&seed, ref.bytes().data(), 4);
            auto expected = pattern(ref.size(), seed);
            std::memcpy(expected.data(), &seed, 4);
            if (checksum(ref.bytes()) != checksum(expected))
              ++failures;
          }
          break;
        }
        case 3: // export a ticket for another thread
          if (!mine.empty()) {
            auto ticket = mine[gen() % mine.size()].export_in_band();
            if (ticket) {
              std::lock_guard guard{shared_mtx};
              tickets.push_back(*ticket);
            } else if (code_of(ticket.error()) != errc::table_full) {
              ++failures;
            }
          }
          break;
        case 4: { // redeem or cancel someone's ticket
          std::optional<transfer_ticket> ticket;
          {
            std::lock_guard guard{shared_mtx};
            if (!tickets.empty()) {
              ticket = tickets.back();
              tickets.pop_back();
            }
          }
          if (ticket) {
            if (gen() % 2 == 0) {
              auto ref = sut->redeem(*ticket);
              if (!ref)
                ++failures;
              else
                mine.push_back(std::move(*ref));
            } else if (sut->cancel(*ticket)) {
              ++failures;
            }
          }
          break;
        }
        default: // drop one of mine
          if (!mine.empty()) {
            auto pos = gen() % mine.size();
            mine.erase(mine.begin() + static_cast<ptrdiff_t>(pos));
          }
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < num_threads; ++i)
    threads.emplace_back(work, i);
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
  shared.clear();
  for (auto& ticket : tickets)
    EXPECT_FALSE(sut->cancel(ticket));
  auto summary = sut->memory_summary();
  ASSERT_TRUE(summary);
  EXPECT_TRUE(summary->objects.empty());
  EXPECT_EQ(summary->bytes_used, 0u);
  EXPECT_EQ(summary->largest_free_block, summary->capacity - 64);
}

TEST(store_concurrency, SpillAndRestoreRunConcurrently) {
  // Objects referenced only by tickets get spilled by one thread's put and
  // restored by another thread's redeem, with the I/O outside the lock.
  store_cleanup cleanup{small_config("spillconc")};
  cleanup.cfg.max_tickets = 1024;
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(sut);
  std::mutex mtx;
  std::vector<transfer_ticket> tickets;
  std::atomic<int> failures{0};
  std::atomic<int> restored{0};
  auto work = [&](int index) {
    std::mt19937 gen{static_cast<unsigned>(index + 100)};
    for (int i = 0; i < 300; ++i) {
      if (gen() % 2 == 0) {
        auto size = 50000 + gen() % 150000;
        auto seed = static_cast<uint32_t>(gen());
        auto bytes = pattern(size, seed);
        std::memcpy(bytes.data(), &seed, 4);
        auto ref = sut->put(bytes);
        if (!ref) {
          if (code_of(ref.error()) != errc::store_full)
            ++failures;
          continue;
        }
        auto ticket = ref->export_in_band();
        if (!ticket) {
          ++failures;
          continue;
        }
        std::lock_guard guard{mtx};
        tickets.push_back(*ticket);
      } else {
        std::optional<transfer_ticket> ticket;
        {
          std::lock_guard guard{mtx};
          if (!tickets.empty()) {
            auto pos = gen() % tickets.size();
            ticket = tickets[pos];
            tickets.erase(tickets.begin() + static_cast<ptrdiff_t>(pos));
          }
        }
        if (!ticket)
          continue;
        auto ref = sut->redeem(*ticket);
        if (!ref) {
          if (code_of(ref.error()) != errc::store_full)
            ++failures;
          else if (sut->cancel(*ticket))
            ++failures;
          continue;
        }
        uint32_t seed = 0;
        std::memcpy(&seed, ref->bytes().data(), 4);
        auto expected = pattern(ref->size(), seed);
        std::memcpy(expected.data(), &seed, 4);
        if (checksum(ref->bytes()) != checksum(expected))
          ++failures;
        ++restored;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < num_threads; ++i)
    threads.emplace_back(work, i);
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(restored.load(), 0);
  for (auto& ticket : tickets)
    EXPECT_FALSE(sut->cancel(ticket));
  auto summary = sut->memory_summary();
  ASSERT_TRUE(summary);
  EXPECT_TRUE(summary->objects.empty());
  EXPECT_EQ(summary->bytes_used, 0u);
  EXPECT_EQ(summary->bytes_spilled, 0u);
  std::error_code ec;
  EXPECT_TRUE(std::filesystem::is_empty(cleanup.cfg.spill_directory, ec)
              || ec);
}

TEST(store_concurrency, CopiesOfOneHandleCountExactly) {
  store_cleanup cleanup{small_config("copies")};
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(sut);
  auto ref = sut->put(pattern(100, 1));
  ASSERT_TRUE(ref);
  std::vector<std::thread> threads;
  std::vector<std::vector<object_ref>> copies(num_threads);
  for (int i = 0; i < num_threads; ++i)
    threads.emplace_back([&, i] {
      for (int j = 0; j < iterations; ++j)
        copies[i].push_back(*ref);
    });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(ref->ref_count(), 1u + num_threads * iterations);
  threads.clear();
  for (int i = 0; i < num_threads; ++i)
    threads.emplace_back([&, i] { copies[i].clear(); });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(ref->ref_count(), 1u);
}

TEST(store_concurrency, ReaperThreadRunsBesideCallsAndStopsOnDetach) {
  store_cleanup cleanup{small_config("reaper")};
  cleanup.cfg.reaper_interval = std::chrono::milliseconds{1};
  for (int round = 0; round < 20; ++round) {
    auto sut = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(sut);
    std::vector<object_ref> refs;
    for (int i = 0; i < 200; ++i) {
      auto ref = sut->put(pattern(64, 1));
      ASSERT_TRUE(ref);
      refs.push_back(std::move(*ref));
      ASSERT_TRUE(sut->reap());
    }
    refs.clear();
    sut->detach(); // joins the reaper thread
  }
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(sut);
  auto summary = sut->memory_summary();
  ASSERT_TRUE(summary);
  EXPECT_TRUE(summary->objects.empty());
  EXPECT_EQ(summary->processes.size(), 1u);
}

TEST(store_concurrency, ThreadsAttachAndDetachTheSameStore) {
  store_cleanup cleanup{small_config("attach")};
  std::vector<std::thread> threads;
  std::mutex mtx;
  std::vector<std::string> failures;
  auto record = [&](const caf::error& err) {
    std::lock_guard guard{mtx};
    failures.push_back(render(err));
  };
  for (int i = 0; i < num_threads; ++i)
    threads.emplace_back([&] {
      for (int j = 0; j < 50; ++j) {
        auto store = object_store::attach(cleanup.cfg);
        if (!store) {
          record(store.error());
          continue;
        }
        auto ref = store->put(pattern(64, 1));
        if (!ref)
          record(ref.error());
      }
    });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(failures, std::vector<std::string>{});
  auto store = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(store);
  auto summary = store->memory_summary();
  ASSERT_TRUE(summary);
  EXPECT_TRUE(summary->objects.empty());
  EXPECT_EQ(summary->processes.size(), 1u);
}

} // namespace
