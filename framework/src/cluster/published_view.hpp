// published_view: what the cluster daemon shows the rest of the node.
//
// The daemon owns the membership view; the node's API (`members()`,
// `watch_members`) is called from any thread. After every change the
// daemon publishes the members here and sends the events to the watchers
// registered here. Watchers are held weakly: an actor that ends stops
// watching without unwatching.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the members and the watchers; events are sent after it.
#pragma once

#include "ferry/cluster_events.hpp"

#include "watcher_set.hpp"

#include <caf/actor.hpp>
#include <caf/message.hpp>

#include <mutex>
#include <vector>

namespace ferry::detail::cluster {

class published_view {
public:
  /// Returns the members as last published.
  std::vector<member_info> members() const;

  /// Replaces the members.
  void publish(std::vector<member_info> xs);

  /// Sends events to `whom` from now on.
  void watch(const caf::actor& whom);

  /// Stops the events to `whom`.
  void unwatch(const caf::actor& whom);

  /// Sends `msg` to every live watcher.
  void tell(const caf::message& msg);

private:
  mutable std::mutex mtx_;
  std::vector<member_info> members_;
  watcher_set watchers_;
};

} // namespace ferry::detail::cluster
