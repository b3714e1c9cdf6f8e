// link_context: what the parts of one link share, fixed when it is made.
//
// A link is composed of parts with one job each (encoder, decoder, outbox,
// credit window, ...); they read the same settings, names and counters.
// The context holds references to the link's own members and the node's
// registry and store, all of which outlive the parts.
//
// Thread-safety: immutable after construction, except the counters (atomic).
#pragma once

#include "link/link_counters.hpp"
#include "link/link_host.hpp"
#include "link/type_check.hpp"

#include "ferry/link_config.hpp"
#include "ferry/serializers/registry.hpp"
#include "ferry/store/object_store.hpp"

#include <cstdint>
#include <string>

namespace ferry::detail {

struct link_context {
  /// The node's registry.
  serializers::registry& registry;
  /// The node's store (null: none).
  store::object_store* store;
  /// The link's settings.
  const link_config& cfg;
  /// This node's name.
  std::string node_name;
  /// The peer's name.
  std::string peer_name;
  /// Whether the two nodes share the host store.
  bool same_host;
  /// The token of the peer's store (names it in handles the peer sends);
  /// 0: none.
  uint64_t peer_store_token;
  /// The link's counters.
  link_counters& counters;
  /// The types whose shape differs on the peer, and how each is bridged or
  /// refused.
  const type_check& types;
  /// The node (relay offers: which peer each store object went to last).
  link_host& host;
};

} // namespace ferry::detail
