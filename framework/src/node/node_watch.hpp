// node_watch: the nodes this node has had links to, and the local actors
// that want to hear when links come and go (see ferry/node_events.hpp).
//
// The handshake reports each link it makes (`up`), the link's end reports
// when it goes down (`down`); both update the view of peers and send
// `node_up` / `node_down` to every watching actor still alive. Watchers are
// held weakly: an actor that ends stops watching without unwatching.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the view and the watchers, and events are sent under it, so
// every watcher hears a node's ups and downs in the order the view took
// them (sending only enqueues into the watchers' mailboxes).
#pragma once

#include "ferry/node_events.hpp"

#include "thread_safety.hpp"
#include "watcher_set.hpp"

#include <caf/actor.hpp>
#include <caf/error.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ferry::detail {

class node_watch {
public:
  /// Sends node events to `whom` from now on.
  void watch(const caf::actor& whom);

  /// Stops sending node events to `whom`.
  void unwatch(const caf::actor& whom);

  /// A link to the node named `node` was made; recorded only if
  /// `still_up()` (asked under the lock) says the link is not down yet, so
  /// that a link taken down while it was being made never reads as up
  /// after its `down`.
  void up(const std::string& node, const std::function<bool()>& still_up);

  /// The link to the node named `node` went down for `reason`.
  void down(const std::string& node, const caf::error& reason);

  /// Returns every node this node has had a link to, by name.
  std::vector<peer_state> peers() const;

private:
  mutable mutex mtx_;
  watcher_set watchers_ FERRY_GUARDED_BY(mtx_);
  std::map<std::string, peer_state> peers_ FERRY_GUARDED_BY(mtx_);
};

} // namespace ferry::detail
