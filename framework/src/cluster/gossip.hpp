// gossip: the cluster's membership view as one value that nodes exchange.
//
// A `gossip` holds every member (address, incarnation, state), what members
// observe of each other's reachability, the ids of removed incarnations
// (tombstones, so stale gossip cannot bring them back), a version vector
// and the set of members that have seen this version. Two gossips merge
// into one that contains what either knew: a member's state is the later of
// the two in the life cycle (joining < up < leaving < exiting < down <
// removed, so a state never goes back), reachability records by their
// observer's own counter, tombstones as a union, versions as the pointwise
// maximum. Merging is commutative, associative and idempotent, so nodes
// that exchange gossip in any order end with the same view (convergence).
//
// The encoding is ferry's little-endian fields (wire/codec.hpp); a decoded
// gossip is checked as hostile input: bounded counts and lengths, members
// sorted and unique, every state known.
//
// Thread-safety: value types.
#pragma once

#include <caf/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ferry::detail::cluster {

/// Where a member is in its life cycle; a later state wins a merge. The
/// values are those of `ferry::member_status`.
enum class member_state : uint8_t {
  joining = 0,
  up = 1,
  leaving = 2,
  exiting = 3,
  down = 4,
  removed = 5,
};

/// Returns the state's name ("up").
const char* to_string(member_state x);

/// One incarnation of a node in the cluster.
struct member {
  member() = default;

  member(std::string address, uint64_t uid, member_state state,
         uint64_t up_number = 0, std::string name = {})
    : address(std::move(address)),
      uid(uid),
      state(state),
      up_number(up_number),
      name(std::move(name)) {
    // nop
  }

  /// Where others reach it ("host:port").
  std::string address;
  /// The incarnation: random at the node's start, never reused.
  uint64_t uid = 0;
  member_state state = member_state::joining;
  /// The order in which the leader moved members up (1 is the oldest);
  /// 0 until up.
  uint64_t up_number = 0;
  /// The node's name (`ferry.name`), which its links go by.
  std::string name;

  friend bool operator==(const member&, const member&) = default;
};

/// Orders members by address, then incarnation (the order of the view).
bool member_less(const member& x, const member& y);

/// What `observer` last said of `subject`; `version` counts the observer's
/// own records, so a newer record of one observer replaces an older one.
struct reachability_record {
  uint64_t observer = 0;
  uint64_t subject = 0;
  bool reachable = true;
  uint64_t version = 0;

  friend bool operator==(const reachability_record&,
                         const reachability_record&) = default;
};

/// A version vector: one counter per member incarnation that changed the
/// view.
using version_vector = std::map<uint64_t, uint64_t>;

/// How two version vectors relate.
enum class version_order { same, before, after, concurrent };

/// Returns how `x` relates to `y` (`before`: `y` knows all `x` knows).
version_order compare(const version_vector& x, const version_vector& y);

struct gossip {
  /// Sorted by `member_less`, unique by (address, uid).
  std::vector<member> members;
  /// Sorted by (observer, subject), unique.
  std::vector<reachability_record> reachability;
  /// Incarnations removed from the cluster.
  std::set<uint64_t> tombstones;
  version_vector version;
  /// Incarnations that have seen `version`.
  std::set<uint64_t> seen;

  /// Returns the member with incarnation `uid`, or null.
  const member* find(uint64_t uid) const;
  member* find(uint64_t uid);

  /// Returns whether some observer that is not down or removed holds
  /// `uid` unreachable.
  bool unreachable(uint64_t uid) const;

  friend bool operator==(const gossip&, const gossip&) = default;
};

/// Returns the merge of `x` and `y` (its `seen` empty; its version the
/// pointwise maximum). Commutative, associative and idempotent.
gossip merge(const gossip& x, const gossip& y);

/// Most members a decoded gossip may hold.
inline constexpr size_t max_members = 4096;

/// Appends `x` to `out` in ferry's little-endian fields.
void encode(const gossip& x, std::vector<std::byte>& out);

/// Reads a gossip encoded by `encode`, treating `bytes` as hostile.
/// Returns `errc::decode_failed` naming what was wrong.
caf::expected<gossip> decode(std::span<const std::byte> bytes);

} // namespace ferry::detail::cluster
