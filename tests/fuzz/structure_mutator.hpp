// What the structure-aware mutators (fuzz_json_shapes.cpp,
// fuzz_msgpack_shapes.cpp) share: picking two different children of a node,
// and the frame around one mutation of a parsed document, which tries a
// node-level change a few times and writes the document back over the input
// when it fits, else leaves the input to libFuzzer's byte mutations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <utility>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size,
                                   size_t max_size);

namespace ferry::serializers::fuzz {

/// Two different indices below `n` (which is at least 2).
inline std::pair<size_t, size_t> two_of(std::mt19937_64& rng, size_t n) {
  auto i = rng() % n;
  return {i, (i + 1 + rng() % (n - 1)) % n};
}

/// Calls `change()` (false: nothing fit) up to 8 times; once it changed the
/// document, `write()` returns its bytes (or nothing), which replace the
/// input when they fit in `max_size`. Otherwise libFuzzer mutates the bytes.
template <class Change, class Write>
size_t structured_mutation(uint8_t* data, size_t size, size_t max_size,
                           Change change, Write write) {
  bool changed = false;
  for (int tries = 0; tries < 8 && !changed; ++tries)
    changed = change();
  std::optional<std::string> out;
  if (changed)
    out = write();
  if (!out || out->size() > max_size)
    return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out->data(), out->size());
  return out->size();
}

} // namespace ferry::serializers::fuzz
