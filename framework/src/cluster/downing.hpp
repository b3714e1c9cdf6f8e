// downing: which side of a split cluster goes on, decided the same way on
// every node.
//
// When members have been unreachable for a while (`stable-after`, measured
// by the caller: the set of unreachable members must not have changed for
// that long), a node applies the cluster's downing policy to its own view:
//
// - `keep_majority`: the side that holds more than half of the members goes
//   on and downs the others; on a tie the side holding the member with the
//   lowest address goes on.
// - `keep_oldest`: the side holding the oldest member (the first that went
//   up) goes on.
// - `none`: nothing is decided; an operator downs members.
//
// The side that loses downs itself: every node there reaches the same
// verdict from its own view, so neither side runs on as a second cluster.
// Members already down or exiting are not counted.
//
// Thread-safety: pure functions.
#pragma once

#include "cluster/gossip.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace ferry::detail::cluster {

enum class downing_policy : uint8_t { none, keep_majority, keep_oldest };

/// Returns the policy named `name` ("none", "keep-majority",
/// "keep-oldest"), or `errc::invalid_config` listing the names.
caf::expected<downing_policy> parse_downing_policy(std::string_view name);

/// Returns the policy's name.
const char* to_string(downing_policy x);

struct downing_decision {
  /// Members this node downs (the other side).
  std::vector<uint64_t> down;
  /// Whether this node's side lost: it downs itself and every member it
  /// still reaches.
  bool down_self = false;
};

/// Applies `policy` to `view` as the node `self` sees it.
downing_decision decide(downing_policy policy, const gossip& view,
                        uint64_t self);

} // namespace ferry::detail::cluster
