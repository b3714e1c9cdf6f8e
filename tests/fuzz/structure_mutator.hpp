// What the structure-aware targets (fuzz_json_shapes.cpp,
// fuzz_msgpack_shapes.cpp) share: picking two different children of a node;
// the frame around one mutation of a parsed document, which tries a
// node-level change a few times and writes the document back over the input
// when it fits, else leaves the input to libFuzzer's byte mutations; and
// the check that a document that decodes has the container kinds the
// family writes (`decode_same_kinds`).
#pragma once

#include "fuzz_types.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

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

/// The container kinds of a parsed document: each value is an array, a map
/// (a JSON object) or something else, with its values in order (a map's
/// keys and values alternating; a JSON object's names left out).
struct kind_tree {
  enum kind_type : char { array = '[', map = '{', other = '.' };
  kind_type kind = other;
  std::vector<kind_tree> children;
};

/// Returns where `in` and `out` first differ in kind, as a path of child
/// indices (`/2/0`), or nothing. Values are compared place by place as far
/// as both documents have values there: the counts are the round trip's to
/// check (check_exact), and a type's own code may read fewer elements than
/// it writes (msgpack-cxx's MSGPACK_DEFINE does).
inline std::optional<std::string> kind_difference(const kind_tree& in,
                                                  const kind_tree& out) {
  if (in.kind != out.kind)
    return std::string{};
  auto n = std::min(in.children.size(), out.children.size());
  for (size_t i = 0; i < n; ++i)
    if (auto d = kind_difference(in.children[i], out.children[i]))
      return "/" + std::to_string(i) + *d;
  return std::nullopt;
}

/// Decodes `data` as a `T` in `family` (decode_one, typed refusals); when
/// it decodes, checks that `data` has the container kinds of the family's
/// own encoding of the value: a document with a map where the family writes
/// an array, or the reverse, must be refused, not read. `kinds(bytes)`
/// parses a document into its kind_tree (nothing: not a document). A
/// failure aborts, which libFuzzer reports with the input.
template <class T, class Kinds>
void decode_same_kinds(const char* family, const char* type_name,
                       std::span<const std::byte> data, Kinds&& kinds) {
  auto encoded = decode_one<T>(family, type_name, data, true);
  if (!encoded)
    return;
  std::optional<kind_tree> in = kinds(data);
  std::optional<kind_tree> out = kinds(std::span<const std::byte>{*encoded});
  std::optional<std::string> where;
  if (!in || !out || (where = kind_difference(*in, *out))) {
    std::fprintf(stderr,
                 "%s: a document decoded as %s although its container kinds "
                 "differ from what the family writes (%s%s)\n",
                 family, type_name, where ? "first at value " : "unparsable",
                 where ? (where->empty() ? "/" : where->c_str()) : "");
    std::abort();
  }
}

} // namespace ferry::serializers::fuzz
