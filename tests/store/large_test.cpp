// Spill and restore of a 1 GiB object (label `large`; needs about 1.5 GiB
// of /dev/shm and 2 GiB of disk).
#include "ferry/store/object_store.hpp"

#include "store_test_support.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

using namespace ferry::store;
using namespace ferry::store::test;

namespace {

constexpr uint64_t gib = uint64_t{1} << 30;

/// Fills `out` with words derived from `seed` and their index.
void fill(std::span<std::byte> out, uint64_t seed) {
  auto* words = reinterpret_cast<uint64_t*>(out.data());
  for (size_t i = 0; i < out.size() / 8; ++i)
    words[i] = (i * 0x9E3779B97F4A7C15ull) ^ seed;
}

/// Returns true if `in` holds what `fill(in, seed)` wrote.
bool check(std::span<const std::byte> in, uint64_t seed) {
  auto* words = reinterpret_cast<const uint64_t*>(in.data());
  for (size_t i = 0; i < in.size() / 8; ++i)
    if (words[i] != ((i * 0x9E3779B97F4A7C15ull) ^ seed))
      return false;
  return true;
}

TEST(store_large, OneGibObjectIsSpilledAndRestored) {
  store_cleanup cleanup{small_config("large", gib + gib / 2)};
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(sut) << render(sut.error());
  auto put_in_transit = [&](uint64_t seed) {
    auto builder = sut->create(gib);
    EXPECT_TRUE(builder) << render(builder.error());
    fill(builder->bytes(), seed);
    auto ref = builder->seal();
    EXPECT_TRUE(ref);
    auto ticket = ref->export_in_band();
    EXPECT_TRUE(ticket);
    return *ticket;
  };
  auto a = put_in_transit(1);
  auto b = put_in_transit(2); // spills a
  auto summary = sut->memory_summary();
  ASSERT_TRUE(summary);
  ASSERT_EQ(summary->objects.size(), 2u);
  EXPECT_TRUE(summary->objects[0].spilled);
  EXPECT_EQ(summary->bytes_spilled, gib);
  auto ra = sut->redeem(a); // spills b, restores a
  ASSERT_TRUE(ra) << render(ra.error());
  EXPECT_EQ(ra->size(), gib);
  EXPECT_TRUE(check(ra->bytes(), 1));
  ra->reset();
  auto rb = sut->redeem(b);
  ASSERT_TRUE(rb) << render(rb.error());
  EXPECT_TRUE(check(rb->bytes(), 2));
  rb->reset();
  summary = sut->memory_summary();
  ASSERT_TRUE(summary);
  EXPECT_TRUE(summary->objects.empty());
  EXPECT_EQ(summary->bytes_spilled, 0u);
  std::error_code ec;
  EXPECT_TRUE(std::filesystem::is_empty(cleanup.cfg.spill_directory, ec));
}

} // namespace
