// shard_map: which shard a key is in, and which member holds a shard.
//
// A key maps to one of `shards` shards by a hash of its type and key (FNV-1a,
// the same on every build and machine). A shard maps to one of the members
// that may hold shards (up, neither leaving nor down) by rendezvous hashing:
// each member scores every shard by a hash of the two, and the highest
// score wins. Every member computes the same owner from the same view, and a
// member that joins or goes takes or gives up only the shards it wins or
// held (about 1/n of them), so a change moves as few shards as any rule
// can. Why a rule and not an allocator: docs/architecture.md, "Entities".
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ferry::detail::entities {

/// Returns the shard of entity (type, key), of `shards` (at least 1).
uint32_t shard_of(std::string_view type, std::string_view key, uint32_t shards);

/// Returns the owner of `shard` among the members `owners` (incarnations);
/// none when there are none.
std::optional<uint64_t> owner_of(uint32_t shard,
                                 std::span<const uint64_t> owners);

/// Returns the name a member holds leases under: its node name and
/// incarnation ("alpha#1f2e...").
std::string lease_owner(const std::string& node_name, uint64_t uid);

} // namespace ferry::detail::entities
