// node_watch: the view of peers and node events (see node/node_watch.hpp).
#include "node/node_watch.hpp"

#include <caf/send.hpp>

namespace ferry::detail {

void node_watch::watch(const caf::actor& whom) {
  std::lock_guard<std::mutex> guard{mtx_};
  watchers_.add(whom);
}

void node_watch::unwatch(const caf::actor& whom) {
  std::lock_guard<std::mutex> guard{mtx_};
  watchers_.remove(whom);
}

void node_watch::up(const std::string& node) {
  std::vector<caf::actor> to;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    peers_[node] = peer_state{node, true, caf::error{}};
    to = watchers_.live();
  }
  for (auto& whom : to)
    caf::anon_send(whom, node_up{node});
}

void node_watch::down(const std::string& node, const caf::error& reason) {
  std::vector<caf::actor> to;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    peers_[node] = peer_state{node, false, reason};
    to = watchers_.live();
  }
  for (auto& whom : to)
    caf::anon_send(whom, node_down{node, reason});
}

std::vector<peer_state> node_watch::peers() const {
  std::lock_guard<std::mutex> guard{mtx_};
  std::vector<peer_state> result;
  result.reserve(peers_.size());
  for (auto& [name, state] : peers_)
    result.push_back(state);
  return result;
}

} // namespace ferry::detail
