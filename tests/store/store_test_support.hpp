// Helpers for the store tests: unique store names and a store that removes
// its segment and spill directory when the test ends, so tests run in
// parallel and leave /dev/shm clean.
#pragma once

#include "ferry/store/errc.hpp"
#include "ferry/store/object_store.hpp"
#include "ferry/test/test_bytes.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace ferry::store::test {

/// Returns a store name unique to this process and call.
inline std::string unique_name(const std::string& tag) {
  static std::atomic<int> counter{0};
  return "ferry-test-" + std::to_string(::getpid()) + "-" + tag + "-"
         + std::to_string(counter++);
}

/// Returns a small configuration with a unique name and spill directory.
inline store_config small_config(const std::string& tag,
                                  uint64_t capacity = uint64_t{1} << 20) {
  store_config cfg;
  cfg.name = unique_name(tag);
  cfg.capacity = capacity;
  cfg.max_objects = 256;
  cfg.max_tickets = 64;
  cfg.max_processes = 16;
  cfg.spill_directory = "/tmp/" + cfg.name + "-spill";
  cfg.reaper_interval = std::chrono::milliseconds{0};
  return cfg;
}

/// Removes a store's segment and spill directory on destruction.
struct store_cleanup {
  store_config cfg;
  ~store_cleanup() {
    // The test may have removed the store already: no error to check.
    static_cast<void>(object_store::remove(cfg.name));
    std::error_code ec;
    std::filesystem::remove_all(cfg.spill_directory, ec);
  }
};

/// Returns `n` bytes of a pattern derived from `seed`.
inline std::vector<std::byte> pattern(size_t n, uint32_t seed) {
  std::vector<std::byte> out(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : out) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<std::byte>(x);
  }
  return out;
}

/// Returns an FNV-1a checksum of `bytes`.
inline uint64_t checksum(std::span<const std::byte> bytes) {
  return ferry::test::fnv1a(bytes);
}

/// Returns the error code of `err` as a store errc.
inline errc code_of(const caf::error& err) {
  return static_cast<errc>(err.code());
}

/// Returns the context text of `err`.
inline std::string text_of(const caf::error& err) {
  return render(err);
}

} // namespace ferry::store::test
