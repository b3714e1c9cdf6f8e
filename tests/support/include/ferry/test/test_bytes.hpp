// Large test payloads: a byte pattern and its hash.
//
// `make_bytes(n)` returns n bytes of a fixed, position-dependent pattern;
// `fnv1a` hashes bytes with 64-bit FNV-1a, so a test compares a payload that
// crossed processes with what was sent by one number. Both walk every byte:
// they live in the test support library, which keeps the build type's
// optimisation while test code compiles at -O0, so tests of several GiB
// spend their time in ferry, not in these loops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ferry::test {

/// Returns `n` bytes of the test pattern (byte i is (i * 131) >> 3).
std::vector<std::byte> make_bytes(size_t n);

/// Returns the 64-bit FNV-1a hash of `bytes`.
uint64_t fnv1a(std::span<const std::byte> bytes);

} // namespace ferry::test
