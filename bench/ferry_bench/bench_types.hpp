// The message types ferry-bench sends, shared by the driver and the peer.
//
// `bench_record` is the structured payload: {int64 id; string name;
// vector<float>; map<string,int>} sized to a payload size. It describes
// itself the way each library's users write it: a cereal `serialize` member
// (cereal.*) and `MSGPACK_DEFINE` (msgpack); for CAF's format it is a plain
// aggregate, as ferry users write records. Plain CAF (the raw-caf baseline)
// serializes it with the `inspect` ferry's reflection gives plain
// aggregates (ferry/serializers/families/caf.hpp), which makes the calls a
// hand-written `f(x.id, x.name, x.values, x.tags)` makes: CAF's walk, one
// virtual call per float. ferry's caf family writes the same bytes, the
// floats in one loop. The raw family cannot: a string and a map are not
// plain bytes.
//
// Both processes register the same types under the same names
// (`register_ferry_types` / `register_caf_types`).
#pragma once

#include "ferry/serializers/families/caf.hpp"

#include <msgpack.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ferry::bench {

/// The record payload. See the file comment.
struct bench_record {
  int64_t id = 0;
  std::string name;
  std::vector<float> values;
  std::map<std::string, int32_t> tags;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(id, name, values, tags);
  }

  MSGPACK_DEFINE(id, name, values, tags)
};

/// Name of `bench_record` in both processes.
inline constexpr const char* record_type_name = "bench.record";

/// Name of `store::shared_array<std::byte>` in both processes.
inline constexpr const char* shared_bytes_type_name = "bench.shared_bytes";

/// Returns a record whose fields hold about `bytes` bytes of data (8 for the
/// id, 8 for the name, two tags, the rest as floats).
inline bench_record make_record(uint64_t bytes) {
  bench_record result;
  result.id = 42;
  result.name = "bench-00";
  result.tags["a"] = 1;
  result.tags["b"] = 2;
  constexpr uint64_t fixed = 8 + 8 + 2 * (1 + 4);
  auto n = bytes > fixed ? (bytes - fixed) / sizeof(float) : 0;
  result.values.resize(static_cast<size_t>(n));
  for (size_t i = 0; i < result.values.size(); ++i)
    result.values[i] = static_cast<float>(i % 1024) * 0.25f;
  return result;
}

/// Returns `bytes` bytes of a repeating pattern (not all zero, so nothing can
/// cheat by compressing pages).
template <class Byte>
std::vector<Byte> make_bytes(uint64_t bytes) {
  std::vector<Byte> result(static_cast<size_t>(bytes));
  for (size_t i = 0; i < result.size(); ++i)
    result[i] = static_cast<Byte>((i * 131u) >> 3);
  return result;
}

} // namespace ferry::bench
