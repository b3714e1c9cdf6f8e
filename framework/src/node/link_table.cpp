// link_table: a node's links (see node/link_table.hpp).
#include "node/link_table.hpp"

namespace ferry::detail {

link_table::admission link_table::admit(const caf::node_id& peer,
                                        uint64_t peer_token,
                                        const link_factory& make) {
  std::vector<std::function<void()>> fire; // called after the lock
  admission result;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& slot = links_[peer];
    if (slot && !slot->is_down()) {
      // Handshakes crossing each other name the same tokens. Another token
      // comes from a peer whose earlier link to this node is gone while
      // this node still holds it (or from a third node forging a hello):
      // taking it silently would leave one direction dropping everything.
      if (peer_token != slot->outbound_token())
        return {};
      return {slot, false};
    }
    // The token named in every hello to this peer so far (handshakes
    // crossing each other name the same one); the link keeps it now.
    auto token = inbound_token_locked(peer);
    tokens_.erase(peer);
    slot = make(token);
    result = {slot, true};
    for (auto i = watchers_.begin(); i != watchers_.end();)
      if (i->second.peer == peer) {
        fire.push_back(std::move(i->second.fn));
        i = watchers_.erase(i);
      } else {
        ++i;
      }
  }
  for (auto& fn : fire)
    fn();
  return result;
}

uint64_t link_table::watch(const caf::node_id& peer,
                           std::function<void()> fn) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto key = next_watch_++;
  watchers_.emplace(key, watcher{peer, std::move(fn)});
  return key;
}

void link_table::unwatch(uint64_t key) {
  std::function<void()> gone; // released after the lock
  std::lock_guard<std::mutex> guard{mtx_};
  if (auto i = watchers_.find(key); i != watchers_.end()) {
    gone = std::move(i->second.fn);
    watchers_.erase(i);
  }
}

uint64_t link_table::inbound_token(const caf::node_id& peer) {
  std::lock_guard<std::mutex> guard{mtx_};
  return inbound_token_locked(peer);
}

uint64_t link_table::inbound_token_locked(const caf::node_id& peer) {
  if (auto i = links_.find(peer);
      i != links_.end() && i->second && !i->second->is_down())
    return i->second->inbound_token();
  auto& token = tokens_[peer];
  while (token == 0)
    token = (uint64_t{random_()} << 32) | random_();
  return token;
}

std::shared_ptr<link_state> link_table::find(const caf::node_id& id) const {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = links_.find(id);
  return i != links_.end() ? i->second : nullptr;
}

std::shared_ptr<link_state> link_table::find(const std::string& name) const {
  std::lock_guard<std::mutex> guard{mtx_};
  for (auto& [id, link] : links_)
    if (link && link->peer_name() == name)
      return link;
  return nullptr;
}

std::shared_ptr<link_state>
link_table::find_by_address(const std::string& address) const {
  std::lock_guard<std::mutex> guard{mtx_};
  if (auto i = by_address_.find(address); i != by_address_.end())
    if (auto j = links_.find(i->second);
        j != links_.end() && j->second && !j->second->is_down())
      return j->second;
  return nullptr;
}

void link_table::note_address(const std::string& address,
                              const caf::node_id& id) {
  std::lock_guard<std::mutex> guard{mtx_};
  by_address_[address] = id;
}

void link_table::drop(const caf::node_id& id) {
  std::shared_ptr<link_state> gone; // released after the lock
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = links_.find(id);
  if (i != links_.end() && i->second && i->second->is_down()) {
    gone = std::move(i->second);
    links_.erase(i);
  }
}

std::vector<std::shared_ptr<link_state>> link_table::all() const {
  std::lock_guard<std::mutex> guard{mtx_};
  std::vector<std::shared_ptr<link_state>> result;
  for (auto& [id, link] : links_)
    if (link)
      result.push_back(link);
  return result;
}

void link_table::clear() {
  decltype(links_) gone; // released after the lock
  std::lock_guard<std::mutex> guard{mtx_};
  gone.swap(links_);
}

} // namespace ferry::detail
