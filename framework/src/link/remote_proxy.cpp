// remote_proxy: a peer's actor on this node (see link/remote_proxy.hpp).
#include "link/remote_proxy.hpp"

#include "link/actor_links.hpp"
#include "link/link_state.hpp"

#include "ferry/errc.hpp"

#include <caf/actor_cast.hpp>
#include <caf/default_attachable.hpp>
#include <caf/system_messages.hpp>

namespace ferry::detail {

void fail_request(caf::abstract_actor* self, caf::mailbox_element& what,
                  caf::error err, caf::execution_unit* host) {
  if (what.sender && what.mid.is_request())
    what.sender->enqueue(caf::make_mailbox_element(self->ctrl(),
                                                   what.mid.response_id(), {},
                                                   std::move(err)),
                         host);
}

remote_proxy::remote_proxy(caf::actor_config& cfg,
                           std::weak_ptr<link_state> link, uint64_t remote_id)
  : caf::monitorable_actor(cfg),
    link_(std::move(link)),
    remote_id_(remote_id) {
  // nop
}

void remote_proxy::enqueue(caf::mailbox_element_ptr what,
                           caf::execution_unit* host) {
  auto link = link_.lock();
  if (!link || link->is_down()) {
    fail_request(this, *what,
                 caf::make_error(errc::link_down,
                                 link ? "the link to node " +
                                          link->peer_name() + " is down"
                                      : std::string{"the link to the actor's "
                                                    "node is gone"}),
                 host);
    return;
  }
  if (getf(is_terminated_flag)) {
    // The remote actor ended (a down_notice), its node is still connected.
    std::string reason;
    {
      // CAF's mutex (monitorable_actor), which guards its fail_state_: not
      // ferry's, so a std::lock_guard the analysis does not see.
      std::lock_guard<std::mutex> guard{mtx_};
      // An actor that ended normally leaves an empty error.
      reason = fail_state_ ? render(fail_state_) : "normal exit";
    }
    fail_request(this, *what,
                 caf::make_error(errc::no_such_actor,
                                 "actor " + std::to_string(remote_id_) +
                                   " on node " + link->peer_name() +
                                   " has terminated (" + reason + ")"),
                 host);
    return;
  }
  if (what->content().match_elements<caf::exit_msg>()) {
    // send_exit to a proxy terminates the remote actor.
    auto& msg = what->content().get_as<caf::exit_msg>(0);
    if (!ends_link(msg)) {
      // The peer's actor sees the exit come from a proxy of its source.
      uint64_t source = 0;
      if (auto src = caf::actor_cast<caf::strong_actor_ptr>(msg.source))
        source = link->export_actor(src);
      link->send_control(exit_request{remote_id_, source, msg.reason});
    }
    return;
  }
  auto sender = what->sender;
  auto err = link->send(remote_id_, sender, what->mid,
                        what->move_content_to_message(), host);
  if (!err)
    return;
  if (what->mid.is_request()) {
    fail_request(this, *what, std::move(err), host);
  } else {
    link->log_limited(link_state::log_topic::send_failed,
                      "could not send a message to node " + link->peer_name() +
                        ": " + render(err));
  }
}

bool remote_proxy::ends_link(const caf::exit_msg& msg) {
  // A live source sent the exit itself (send_exit), linked or not.
  auto source = caf::actor_cast<caf::strong_actor_ptr>(msg.source);
  if (source && !source->get()->getf(is_terminated_flag))
    return false;
  caf::default_attachable::observe_token tk{msg.source,
                                            caf::default_attachable::link};
  size_t removed = 0;
  exclusive_critical_section([&] { removed = detach_impl(tk, true); });
  return removed > 0;
}

void remote_proxy::tell_peer(caf::abstract_actor* x, bool establish) {
  if (quiet_link_changes::active())
    return;
  if (auto link = link_.lock(); link && !link->is_down())
    post_link_change(*link, remote_id_, x, establish);
}

bool remote_proxy::add_backlink(caf::abstract_actor* x) {
  if (!monitorable_actor::add_backlink(x))
    return false;
  tell_peer(x, true);
  return true;
}

bool remote_proxy::remove_backlink(caf::abstract_actor* x) {
  if (!monitorable_actor::remove_backlink(x))
    return false;
  tell_peer(x, false);
  return true;
}

void remote_proxy::kill(caf::error reason, caf::execution_unit* host) {
  cleanup(std::move(reason), host);
}

void kill_proxy(const caf::strong_actor_ptr& proxy, caf::error reason,
                caf::execution_unit* host) {
  static_cast<remote_proxy*>(caf::actor_cast<caf::abstract_actor*>(proxy))
    ->kill(std::move(reason), host);
}

} // namespace ferry::detail
