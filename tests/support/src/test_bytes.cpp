#include "ferry/test/test_bytes.hpp"

namespace ferry::test {

std::vector<std::byte> make_bytes(size_t n) {
  std::vector<std::byte> result(n);
  for (size_t i = 0; i < n; ++i)
    result[i] = static_cast<std::byte>((i * 131u) >> 3);
  return result;
}

uint64_t fnv1a(std::span<const std::byte> bytes) {
  uint64_t hash = 1469598103934665603ull;
  for (auto b : bytes) {
    hash ^= static_cast<uint64_t>(b);
    hash *= 1099511628211ull;
  }
  return hash;
}

} // namespace ferry::test
