// link_table: a node's links (see node/link_table.hpp).
#include "node/link_table.hpp"

namespace ferry::detail {

link_table::admission link_table::admit(uint64_t peer,
                                        const link_factory& make) {
  std::vector<std::function<void()>> fire; // called after the lock
  admission result;
  {
    lock_guard guard{mtx_};
    if (closed_)
      return {};
    auto& slot = links_[peer];
    if (slot && !slot->is_down())
      return {slot, false};
    slot = make();
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

uint64_t link_table::watch(uint64_t peer, std::function<void()> fn) {
  lock_guard guard{mtx_};
  auto key = next_watch_++;
  watchers_.emplace(key, watcher{peer, std::move(fn)});
  return key;
}

void link_table::unwatch(uint64_t key) {
  std::function<void()> gone; // released after the lock
  lock_guard guard{mtx_};
  if (auto i = watchers_.find(key); i != watchers_.end()) {
    gone = std::move(i->second.fn);
    watchers_.erase(i);
  }
}

std::shared_ptr<link_state> link_table::find(uint64_t id) const {
  lock_guard guard{mtx_};
  auto i = links_.find(id);
  return i != links_.end() ? i->second : nullptr;
}

std::shared_ptr<link_state> link_table::find(const std::string& name) const {
  lock_guard guard{mtx_};
  std::shared_ptr<link_state> result;
  for (auto& [id, link] : links_)
    if (link && link->peer_name() == name && (!result || !link->is_down()))
      result = link;
  return result;
}

std::shared_ptr<link_state>
link_table::find_by_address(const std::string& address) const {
  lock_guard guard{mtx_};
  if (auto i = by_address_.find(address); i != by_address_.end())
    if (auto j = links_.find(i->second);
        j != links_.end() && j->second && !j->second->is_down())
      return j->second;
  return nullptr;
}

void link_table::note_address(const std::string& address, uint64_t id) {
  lock_guard guard{mtx_};
  by_address_[address] = id;
}

void link_table::drop(const std::shared_ptr<link_state>& link) {
  std::shared_ptr<link_state> gone; // released after the lock
  lock_guard guard{mtx_};
  auto i = links_.find(link->peer_id());
  if (i != links_.end() && i->second == link && link->is_down()) {
    gone = std::move(i->second);
    links_.erase(i);
  }
}

std::vector<std::shared_ptr<link_state>> link_table::all() const {
  lock_guard guard{mtx_};
  std::vector<std::shared_ptr<link_state>> result;
  for (auto& [id, link] : links_)
    if (link)
      result.push_back(link);
  return result;
}

std::vector<std::shared_ptr<link_state>> link_table::close() {
  lock_guard guard{mtx_};
  closed_ = true;
  std::vector<std::shared_ptr<link_state>> result;
  for (auto& [id, link] : links_)
    if (link)
      result.push_back(link);
  return result;
}

void link_table::clear() {
  decltype(links_) gone; // released after the lock
  lock_guard guard{mtx_};
  gone.swap(links_);
}

} // namespace ferry::detail
