// node_watch: the view of peers and node events (see node/node_watch.hpp).
#include "node/node_watch.hpp"

#include <caf/send.hpp>

namespace ferry::detail {

void node_watch::watch(const caf::actor& whom) {
  lock_guard guard{mtx_};
  watchers_.add(whom);
}

void node_watch::unwatch(const caf::actor& whom) {
  lock_guard guard{mtx_};
  watchers_.remove(whom);
}

void node_watch::up(const std::string& node,
                    const std::function<bool()>& still_up) {
  lock_guard guard{mtx_};
  if (!still_up())
    return; // it went down first: its `down` came or comes, not this
  peers_[node] = peer_state{node, true, caf::error{}};
  for (auto& whom : watchers_.live())
    caf::anon_send(whom, node_up{node});
}

void node_watch::down(const std::string& node, const caf::error& reason) {
  lock_guard guard{mtx_};
  peers_[node] = peer_state{node, false, reason};
  for (auto& whom : watchers_.live())
    caf::anon_send(whom, node_down{node, reason});
}

std::vector<peer_state> node_watch::peers() const {
  lock_guard guard{mtx_};
  std::vector<peer_state> result;
  result.reserve(peers_.size());
  for (auto& [name, state] : peers_)
    result.push_back(state);
  return result;
}

} // namespace ferry::detail
