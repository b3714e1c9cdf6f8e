// link_state's actor tables: proxies of the peer's actors, this node's
// actors exported to the peer, actors the peer spawned here, and what
// happens when one of them ends (see link/link_state.hpp).
#include "link/link_state.hpp"

#include "link/remote_proxy.hpp"

#include "ferry/errc.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_config.hpp>
#include <caf/make_actor.hpp>

namespace ferry::detail {

caf::strong_actor_ptr link_state::make_proxy(uint64_t id) {
  auto& sys = host_.system();
  caf::actor_config cfg;
  return caf::make_actor<remote_proxy, caf::strong_actor_ptr>(
    sys.next_actor_id(), sys.node(), &sys, cfg, weak_from_this(), id);
}

caf::expected<caf::strong_actor_ptr> link_state::sender_proxy(uint64_t id) {
  if (auto result = actors_.proxy(id, true))
    return result;
  return caf::make_error(
    errc::too_many_proxies,
    "node " + ctx_.node_name + " refused a message from actor " +
      std::to_string(id) + " of node " + peer_name_ + ": the link keeps " +
      std::to_string(cfg_.max_proxies) + " proxies of that node's live " +
      "actors already (max-proxies); raise ferry.link.max-proxies (or " +
      "ferry.links." + peer_name_ + ") if the peer has that many actors " +
      "talking to this node");
}

caf::strong_actor_ptr link_state::addressable(uint64_t id) {
  if (auto result = actors_.exported(id))
    return result;
  return host_.exposed(id);
}

uint64_t link_state::export_actor(const caf::strong_actor_ptr& whom) {
  auto id = whom->id();
  if (!actors_.add_export(whom))
    return id;
  std::weak_ptr<link_state> weak = weak_from_this();
  whom->get()->attach_functor([weak, id](const caf::error& reason) {
    if (auto link = weak.lock()) {
      link->actors_.remove_export(id);
      // Nobody is left to answer: a request the peer never answers (a
      // response promise dropped there, which CAF 0.17 does not report)
      // would otherwise stay until the link goes down.
      link->requests_.forget(id);
      link->send_control(down_notice{id, reason});
    }
  });
  return id;
}

caf::expected<spawn_slot>
link_state::reserve_spawn(const std::string& type_name) {
  if (auto slot = actors_.reserve_spawn())
    return std::move(*slot);
  auto& me = ctx_.node_name;
  auto where = "node " + me + " refused to spawn \"" + type_name +
               "\" for node " + peer_name_ + ": ";
  if (actors_.max_spawned() == 0)
    return caf::make_error(
      errc::too_many_actors,
      where +
        "its link to that node allows no spawns (max-spawned-actors "
        "is 0); to allow them, set max-spawned-actors above 0 on node " +
        me + " in [ferry.link] or for " + peer_name_ + " in [ferry.links]");
  return caf::make_error(
    errc::too_many_actors,
    where + "that node has " + std::to_string(actors_.max_spawned()) +
      " live actors spawned here already (max-spawned-actors); let some "
      "of them end, or raise ferry.link.max-spawned-actors (or "
      "ferry.links." +
      peer_name_ + ") on node " + me);
}

void link_state::adopt_spawned(spawn_slot slot, caf::actor whom) {
  // A closed table (the link went down) adopts nothing: the actor ends now.
  if (!actors_.adopt(std::move(slot), whom)) {
    caf::anon_send_exit(whom, caf::exit_reason::remote_link_unreachable);
    return;
  }
  // Attached after adopting: for an actor that ended already, the functor
  // runs at once. `whom` keeps the actor alive meanwhile.
  auto id = whom.id();
  std::weak_ptr<link_state> weak = weak_from_this();
  caf::actor_cast<caf::abstract_actor*>(whom)->attach_functor([weak, id] {
    if (auto link = weak.lock())
      link->actors_.remove_spawned(id);
  });
}

void link_state::on_down(uint64_t id, const caf::error& reason,
                         caf::execution_unit* host) {
  if (auto victim = actors_.on_down(id, reason))
    kill_proxy(victim, reason, host);
}

} // namespace ferry::detail
