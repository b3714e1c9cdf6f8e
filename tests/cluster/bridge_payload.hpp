// The store objects of the bridged cluster test: what a member puts in the
// array it sends (`payload_element`) and the hash a receiver answers
// (`payload_hash`), so that bridge_member.cpp fills and checks them and
// bridge_test.cpp computes the answer it expects, from one definition.
// Every element is an integer below 2^53, exact as a double, and differs
// from sender to sender (`seed`) and from index to index. Pure functions.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace ferry::test {

/// Returns element `i` of the array a member sends with `seed`.
/// REQUIRES: `seed < 2^20` and `i < 2^32`.
inline double payload_element(uint64_t seed, uint64_t i) {
  return static_cast<double>((seed << 32) + i);
}

/// The hash of no elements.
inline constexpr uint64_t payload_hash_start = 1469598103934665603ull;

/// Returns `hash` (FNV-1a so far) extended by the bit pattern of `x`.
inline uint64_t payload_hash_step(uint64_t hash, double x) {
  return (hash ^ std::bit_cast<uint64_t>(x)) * 1099511628211ull;
}

/// Returns FNV-1a over the bit patterns of `xs`, one 64-bit word at a time.
inline uint64_t payload_hash(std::span<const double> xs) {
  auto hash = payload_hash_start;
  for (auto x : xs)
    hash = payload_hash_step(hash, x);
  return hash;
}

/// Returns the hash of the `n` elements a member sends with `seed`.
inline uint64_t expected_payload_hash(uint64_t seed, uint64_t n) {
  auto hash = payload_hash_start;
  for (uint64_t i = 0; i < n; ++i)
    hash = payload_hash_step(hash, payload_element(seed, i));
  return hash;
}

} // namespace ferry::test
