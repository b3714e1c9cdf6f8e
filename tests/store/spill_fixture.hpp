// The fixture of the spilling tests (spill_test.cpp, spill_recovery_test.cpp):
// a small store whose objects of `big` bytes overflow its memory after a
// few, with helpers to put an object referenced only by a ticket and to
// count the files in the spill directory.
#pragma once

#include "ferry/store/object_store.hpp"

#include "store_test_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace ferry::store::test {

inline constexpr size_t big = 600 * 1024;

class spill_test : public ::testing::Test {
protected:
  void SetUp() override {
    cleanup.cfg = small_config("spill");
    configure(cleanup.cfg);
    auto attached = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(attached) << render(attached.error());
    sut = std::move(*attached);
  }

  virtual void configure(store_config&) {
    // defaults
  }

  /// Puts an object and returns a ticket as its only reference.
  transfer_ticket put_in_transit(uint32_t seed) {
    auto ref = sut.put(pattern(big, seed));
    EXPECT_TRUE(ref) << render(ref.error());
    if (!ref)
      return {};
    auto ticket = ref->export_in_band();
    EXPECT_TRUE(ticket);
    return ticket ? *ticket : transfer_ticket{};
  }

  size_t spill_files() {
    size_t n = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator{
           cleanup.cfg.spill_directory, ec};
         !ec && it != std::filesystem::directory_iterator{};
         it.increment(ec))
      ++n;
    return n;
  }

  ferry::store::memory_summary summary() {
    auto result = sut.memory_summary();
    EXPECT_TRUE(result);
    return result ? *result : ferry::store::memory_summary{};
  }

  store_cleanup cleanup;
  object_store sut;
};

} // namespace ferry::store::test
