// What a node tells the actors that watch the cluster: which nodes it has
// links to, and when a link comes or goes.
//
// `node::watch_nodes(whom)` makes the actor `whom` receive a `node_up` each
// time this node makes a link to another node, and a `node_down` each time such
// a link goes down: the other node stopped (it said goodbye), its process died,
// the connection closed, or it went silent past the link's
// `connection-timeout`; the reason says which (`ferry_fw: link_down`: "node
// beta shut down", "the peer at ... closed the connection", "the peer at ...
// reset the connection", "heard nothing from ... for ..."). These are local
// messages of this node (like CAF 0.18's `node_down_msg` or Akka's member
// events); they never travel. `node::peers()` returns the same view on demand.
//
// Usage:
//
//     n->watch_nodes(self);
//     self->become(
//       [](const ferry::node_up& x) { ... x.node ... },
//       [](const ferry::node_down& x) { ... x.node, ferry::render(x.reason) });
//
// Thread-safety: value types.
#pragma once

#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>

#include <string>

namespace ferry {

/// This node made a link to the node named `node`.
struct node_up {
  std::string node;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_up& x) {
  return f(caf::meta::type_name("ferry.node_up"), x.node);
}

/// The link to the node named `node` went down, for `reason`.
struct node_down {
  std::string node;
  caf::error reason;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_down& x) {
  return f(caf::meta::type_name("ferry.node_down"), x.node, x.reason);
}

/// A node this node has had a link to, as `node::peers()` reports it.
struct peer_state {
  /// The node's name.
  std::string node;
  /// Whether the link to it is up now.
  bool up = false;
  /// Why the last link went down (none while it is up).
  caf::error reason;
};

} // namespace ferry
