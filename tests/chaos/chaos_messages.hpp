// The messages of the chaos run's workload and the checksums they carry.
//
// A chaos node (chaos_node.cpp) sends its peers requests (`chaos_call`,
// answered with the checksum of the body), one-way notes (`chaos_note`,
// numbered per sender incarnation and link epoch, carrying the checksum of
// their body), a `chaos_hello` when it makes a link (with the handle of its
// front actor beside it), and 64 MiB store objects (`u64_array`, answered
// with `object_checksum`). Every node registers the types under the names in
// `register_chaos_types`. Value types and pure functions.
#pragma once

#include "ferry/node_config.hpp"
#include "ferry/store/shared_array.hpp"

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ferry::chaos {

/// A request for the checksum of `body`, from incarnation `from`.
struct chaos_call {
  std::string from;
  uint64_t id = 0;
  std::string body;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, chaos_call& x) {
  return f(caf::meta::type_name("chaos.call"), x.from, x.id, x.body);
}

/// A one-way message: number `seq` of incarnation `from` on link `epoch`;
/// `sum` is the checksum of `body`.
struct chaos_note {
  std::string from;
  std::string epoch;
  uint64_t seq = 0;
  uint64_t sum = 0;
  std::string body;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, chaos_note& x) {
  return f(caf::meta::type_name("chaos.note"), x.from, x.epoch, x.seq, x.sum,
           x.body);
}

/// The first message on a link: node `name` (incarnation `inc`) begins link
/// epoch `epoch`. Travels with the sender's front actor as second element.
struct chaos_hello {
  std::string name;
  std::string inc;
  std::string epoch;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, chaos_hello& x) {
  return f(caf::meta::type_name("chaos.hello"), x.name, x.inc, x.epoch);
}

/// A 64 MiB store object of the workload.
using u64_array = store::shared_array<uint64_t>;

/// Returns FNV-1a over `bytes`.
inline uint64_t checksum(std::string_view bytes) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : bytes)
    hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

/// Returns element `i` of the object made with `seed`.
inline uint64_t object_element(uint64_t seed, uint64_t i) {
  return (seed * 0x9e3779b97f4a7c15ull) ^ (i * 0xbf58476d1ce4e5b9ull);
}

/// Returns FNV-1a over the words of an object, one 64-bit word at a time.
inline uint64_t object_checksum(std::span<const uint64_t> words) {
  uint64_t hash = 1469598103934665603ull;
  for (auto w : words)
    hash = (hash ^ w) * 1099511628211ull;
  return hash;
}

/// Registers the workload's message types with `cfg`.
inline void register_chaos_types(node_config& cfg) {
  cfg.add_message_type<chaos_call>("chaos.call");
  cfg.add_message_type<chaos_note>("chaos.note");
  cfg.add_message_type<chaos_hello>("chaos.hello");
  cfg.add_message_type<u64_array>("chaos.u64_array");
}

} // namespace ferry::chaos
