// actor_table: proxies, exported and spawned actors of a link (see
// link/actor_table.hpp).
#include "link/actor_table.hpp"

#include "link/remote_proxy.hpp"

#include <caf/exit_reason.hpp>

#include <algorithm>

namespace ferry::detail {

spawn_slot::~spawn_slot() {
  if (table_ != nullptr)
    table_->cancel_spawn();
}

actor_table::actor_table(uint64_t max_proxies, uint64_t max_spawned,
                         proxy_factory make_proxy)
  : max_proxies_(max_proxies),
    max_spawned_(max_spawned),
    make_proxy_(std::move(make_proxy)) {
  // nop
}

caf::strong_actor_ptr actor_table::proxy(uint64_t id, bool limited) {
  lock_guard guard{mtx_};
  if (auto i = proxies_.find(id); i != proxies_.end())
    return i->second;
  // Proxies of a dead link or of actors reported down are made terminated
  // and take no slot; only a live proxy counts against max_proxies.
  auto dead = std::find_if(recently_down_.begin(), recently_down_.end(),
                           [id](const auto& x) { return x.first == id; });
  if (limited && !closed_ && dead == recently_down_.end() &&
      proxies_.size() >= max_proxies_)
    return nullptr;
  auto result = make_proxy_(id);
  if (closed_) {
    kill_proxy(result, caf::exit_reason::remote_link_unreachable, nullptr);
    return result;
  }
  if (dead != recently_down_.end()) {
    kill_proxy(result, dead->second, nullptr);
    return result;
  }
  proxies_.emplace(id, result);
  return result;
}

caf::strong_actor_ptr actor_table::on_down(uint64_t id,
                                           const caf::error& reason) {
  lock_guard guard{mtx_};
  if (auto i = proxies_.find(id); i != proxies_.end()) {
    auto victim = std::move(i->second);
    proxies_.erase(i);
    return victim;
  }
  if (recently_down_.size() == max_recently_down)
    recently_down_.pop_front();
  recently_down_.emplace_back(id, reason);
  return nullptr;
}

bool actor_table::add_export(const caf::strong_actor_ptr& whom) {
  auto id = whom->id();
  lock_guard guard{mtx_};
  // Look up first: emplace would allocate a node for every message.
  return exported_.count(id) == 0 && exported_.emplace(id, whom).second;
}

void actor_table::remove_export(uint64_t id) {
  caf::strong_actor_ptr gone; // released after the lock
  lock_guard guard{mtx_};
  if (auto i = exported_.find(id); i != exported_.end()) {
    gone = std::move(i->second);
    exported_.erase(i);
  }
}

caf::strong_actor_ptr actor_table::exported(uint64_t id) const {
  lock_guard guard{mtx_};
  auto i = exported_.find(id);
  return i != exported_.end() ? i->second : nullptr;
}

std::optional<spawn_slot> actor_table::reserve_spawn() {
  lock_guard guard{mtx_};
  if (spawned_.size() + spawns_reserved_ >= max_spawned_)
    return std::nullopt;
  ++spawns_reserved_;
  return spawn_slot{this};
}

void actor_table::cancel_spawn() {
  lock_guard guard{mtx_};
  --spawns_reserved_;
}

bool actor_table::adopt(spawn_slot slot, const caf::actor& whom) {
  lock_guard guard{mtx_};
  // The slot becomes the actor's entry.
  slot.table_ = nullptr;
  --spawns_reserved_;
  if (closed_)
    return false;
  spawned_.emplace(whom.id(), whom);
  return true;
}

void actor_table::remove_spawned(caf::actor_id id) {
  caf::actor gone; // released after the lock
  lock_guard guard{mtx_};
  if (auto i = spawned_.find(id); i != spawned_.end()) {
    gone = std::move(i->second);
    spawned_.erase(i);
  }
}

actor_table::contents actor_table::close() {
  contents result;
  lock_guard guard{mtx_};
  closed_ = true;
  result.proxies.reserve(proxies_.size());
  for (auto& [id, ptr] : proxies_)
    result.proxies.emplace_back(std::move(ptr));
  proxies_.clear();
  result.exported.swap(exported_);
  result.spawned.swap(spawned_);
  return result;
}

size_t actor_table::proxies() const {
  lock_guard guard{mtx_};
  return proxies_.size();
}

size_t actor_table::spawned() const {
  lock_guard guard{mtx_};
  return spawned_.size();
}

} // namespace ferry::detail
