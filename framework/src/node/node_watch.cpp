// node_watch: the view of peers and node events (see node/node_watch.hpp).
#include "node/node_watch.hpp"

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>

#include <algorithm>

namespace ferry::detail {

void node_watch::watch(const caf::actor& whom) {
  if (!whom)
    return;
  auto ptr = caf::actor_cast<caf::weak_actor_ptr>(whom);
  std::lock_guard<std::mutex> guard{mtx_};
  if (std::find(watchers_.begin(), watchers_.end(), ptr) == watchers_.end())
    watchers_.push_back(std::move(ptr));
}

void node_watch::unwatch(const caf::actor& whom) {
  auto ptr = caf::actor_cast<caf::weak_actor_ptr>(whom);
  std::lock_guard<std::mutex> guard{mtx_};
  std::erase(watchers_, ptr);
}

std::vector<caf::actor> node_watch::live_watchers_locked() {
  std::vector<caf::actor> result;
  std::erase_if(watchers_, [&](const caf::weak_actor_ptr& x) {
    auto strong = caf::actor_cast<caf::actor>(x);
    if (!strong)
      return true;
    result.push_back(std::move(strong));
    return false;
  });
  return result;
}

void node_watch::up(const std::string& node) {
  std::vector<caf::actor> to;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    peers_[node] = peer_state{node, true, caf::error{}};
    to = live_watchers_locked();
  }
  for (auto& whom : to)
    caf::anon_send(whom, node_up{node});
}

void node_watch::down(const std::string& node, const caf::error& reason) {
  std::vector<caf::actor> to;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    peers_[node] = peer_state{node, false, reason};
    to = live_watchers_locked();
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
