// watcher_set: local actors that asked to hear of events, held weakly.
//
// An actor that ends stops watching without unwatching: `live` forgets it.
// node_watch (node events) and the cluster's published view (member
// events) keep their watchers here.
//
// Thread-safety: none; the owner guards it with its own lock. node_watch
// sends its events under that lock (to keep their order), the cluster's
// published view after releasing it.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>

#include <algorithm>
#include <vector>

namespace ferry::detail {

class watcher_set {
public:
  /// Adds `whom` (once; nothing for an invalid handle).
  void add(const caf::actor& whom) {
    if (!whom)
      return;
    auto ptr = caf::actor_cast<caf::weak_actor_ptr>(whom);
    if (std::find(xs_.begin(), xs_.end(), ptr) == xs_.end())
      xs_.push_back(std::move(ptr));
  }

  /// Removes `whom`.
  void remove(const caf::actor& whom) {
    std::erase(xs_, caf::actor_cast<caf::weak_actor_ptr>(whom));
  }

  /// Returns the watchers still alive and forgets the others.
  std::vector<caf::actor> live() {
    std::vector<caf::actor> result;
    std::erase_if(xs_, [&](const caf::weak_actor_ptr& x) {
      auto strong = caf::actor_cast<caf::actor>(x);
      if (!strong)
        return true;
      result.push_back(std::move(strong));
      return false;
    });
    return result;
  }

private:
  std::vector<caf::weak_actor_ptr> xs_;
};

} // namespace ferry::detail
