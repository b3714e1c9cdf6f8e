// published_view: what the cluster daemon shows the rest of the node.
//
// The daemon owns the membership view; the node's API (`members()`,
// `watch_members`) is called from any thread. After every change the
// daemon publishes the members here and sends the events to the watchers
// registered here, and the figures a metrics scrape shows (phi of the
// members it watches, how long the last change took to converge). Watchers
// are held weakly: an actor that ends stops watching without unwatching.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the members and the watchers; events are sent after it.
#pragma once

#include "ferry/cluster_events.hpp"

#include "metrics/exposition.hpp"
#include "thread_safety.hpp"
#include "watcher_set.hpp"

#include <caf/actor.hpp>
#include <caf/message.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ferry::detail::cluster {

class published_view {
public:
  /// Returns the members as last published.
  std::vector<member_info> members() const;

  /// Replaces the members, the leader's incarnation and whether the view
  /// converged.
  void publish(std::vector<member_info> xs, std::optional<uint64_t> leader,
               bool converged);

  /// Sends events to `whom` from now on.
  void watch(const caf::actor& whom);

  /// Stops the events to `whom`.
  void unwatch(const caf::actor& whom);

  /// Sends `msg` to every live watcher.
  void tell(const caf::message& msg);

  /// Replaces phi of the watched members.
  void set_phi(std::map<uint64_t, double> phi);

  /// Notes how long the last change of the view took to converge.
  void set_convergence(std::chrono::steady_clock::duration took);

  /// Returns the members, phi, the leader, convergence and the last
  /// convergence time (`name` and `self` as given here).
  cluster_figures figures(const std::string& name, uint64_t self) const;

private:
  mutable mutex mtx_;
  std::vector<member_info> members_ FERRY_GUARDED_BY(mtx_);
  std::map<uint64_t, double> phi_ FERRY_GUARDED_BY(mtx_);
  double convergence_seconds_ FERRY_GUARDED_BY(mtx_) = 0;
  std::optional<uint64_t> leader_ FERRY_GUARDED_BY(mtx_);
  bool converged_ FERRY_GUARDED_BY(mtx_) = false;
  watcher_set watchers_ FERRY_GUARDED_BY(mtx_);
};

} // namespace ferry::detail::cluster
