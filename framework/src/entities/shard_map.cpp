// shard_map: keys to shards, shards to members (see entities/shard_map.hpp).
#include "entities/shard_map.hpp"

#include <cstdio>

namespace ferry::detail::entities {

namespace {

constexpr uint64_t fnv_offset = 14695981039346656037ull;
constexpr uint64_t fnv_prime = 1099511628211ull;

uint64_t fnv1a(uint64_t h, std::string_view bytes) {
  for (auto c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= fnv_prime;
  }
  return h;
}

/// A 64-bit mix (splitmix64's finalizer): spreads close inputs apart.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

} // namespace

uint32_t shard_of(std::string_view type, std::string_view key,
                  uint32_t shards) {
  auto h = fnv1a(fnv_offset, type);
  h ^= 0; // the separator: a type and key split elsewhere hash apart
  h *= fnv_prime;
  h = fnv1a(h, key);
  return static_cast<uint32_t>(h % (shards == 0 ? 1 : shards));
}

std::optional<uint64_t> owner_of(uint32_t shard,
                                 std::span<const uint64_t> owners) {
  std::optional<uint64_t> best;
  uint64_t best_score = 0;
  for (auto uid : owners) {
    auto score = mix(mix(uid) ^ (uint64_t{shard} * 0x9e3779b97f4a7c15ull));
    if (!best || score > best_score || (score == best_score && uid < *best)) {
      best = uid;
      best_score = score;
    }
  }
  return best;
}

std::string lease_owner(const std::string& node_name, uint64_t uid) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(uid));
  return node_name + "#" + buf;
}

} // namespace ferry::detail::entities
