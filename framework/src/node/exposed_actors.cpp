// exposed_actors: actors a node serves (see node/exposed_actors.hpp).
#include "node/exposed_actors.hpp"

#include "ferry/errc.hpp"

#include <caf/actor_cast.hpp>

namespace ferry::detail {

exposed_actors::exposed_actors(std::string node_name)
  : node_name_(std::move(node_name)) {
  // nop
}

void exposed_actors::publish_default(const caf::actor& whom) {
  if (!whom)
    return; // Listen only: peers use exposed names and remote_spawn.
  lock_guard guard{mtx_};
  default_ = whom.id();
  by_id_[whom.id()] = caf::actor_cast<caf::strong_actor_ptr>(whom);
}

void exposed_actors::expose(const std::string& name, const caf::actor& whom) {
  if (!whom)
    return;
  lock_guard guard{mtx_};
  by_name_[name] = whom;
  by_id_[whom.id()] = caf::actor_cast<caf::strong_actor_ptr>(whom);
}

caf::expected<uint64_t> exposed_actors::lookup(const std::string& name) const {
  lock_guard guard{mtx_};
  if (name.empty() && default_ != 0)
    return default_;
  auto i = by_name_.find(name);
  if (i == by_name_.end()) {
    std::string known;
    for (auto& [key, value] : by_name_)
      known += (known.empty() ? "" : ", ") + key;
    return caf::make_error(errc::no_such_actor,
                           "node " + node_name_ + " exposes no actor named \"" +
                             name + "\" (exposed: [" + known +
                             "]); call node.expose(name, actor) there");
  }
  return i->second.id();
}

caf::strong_actor_ptr exposed_actors::find(uint64_t id) const {
  lock_guard guard{mtx_};
  auto i = by_id_.find(id);
  return i != by_id_.end() ? i->second : nullptr;
}

uint64_t exposed_actors::default_id() const {
  lock_guard guard{mtx_};
  return default_;
}

} // namespace ferry::detail
