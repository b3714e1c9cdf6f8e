// actor_links: links between actors across a link (see link/actor_links.hpp).
#include "link/actor_links.hpp"

#include "link/link_state.hpp"

#include "ferry/errc.hpp"

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>

namespace ferry::detail {

namespace {

thread_local bool quiet = false;

} // namespace

quiet_link_changes::quiet_link_changes() noexcept : previous_(quiet) {
  quiet = true;
}

quiet_link_changes::~quiet_link_changes() {
  quiet = previous_;
}

bool quiet_link_changes::active() noexcept {
  return quiet;
}

void post_link_change(link_state& link, uint64_t target,
                      caf::abstract_actor* partner, bool establish) {
  link.host().post_link_change(
    link_change{link.weak_from_this(), target, partner->ctrl(), establish});
}

caf::behavior linker(caf::event_based_actor*) {
  return {
    [](link_change& x) {
      auto link = x.link.lock();
      if (!link || !x.partner)
        return;
      if (x.establish)
        link->export_actor(x.partner);
      link->send_control(link_request{x.target, x.partner->id(), x.establish});
    },
  };
}

void apply_link_request(link_state& link, const link_request& x,
                        caf::execution_unit*) {
  // An actor no longer addressable has ended: its down notice is on its way to
  // the peer, whose proxy then ends and sends the partner its exit message.
  auto target = link.addressable(x.actor);
  if (!target)
    return;
  auto partner = link.sender_proxy(x.partner);
  if (!partner) {
    link.log_limited(link_state::log_topic::send_failed,
                     "could not link an actor with actor " +
                       std::to_string(x.partner) + " of node " +
                       link.peer_name() + ": " + render(partner.error()));
    return;
  }
  quiet_link_changes guard;
  if (x.establish)
    target->get()->add_link((*partner)->get());
  else
    target->get()->remove_link((*partner)->get());
}

} // namespace ferry::detail
