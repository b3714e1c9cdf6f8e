// actor_links: CAF links (`link_to`) between an actor of this node and an
// actor of the peer, so that exit messages cross the link both ways.
//
// A local actor Y that links to the proxy of the peer's actor X
// (`Y->link_to(proxy_X)`) makes CAF call the proxy's `add_backlink(Y)`
// while it holds both actors' locks. The proxy records the link on this
// node as any actor would, and posts a `link_change` to the node's linker
// (an actor of the node's own): exporting Y to the peer attaches to Y, which
// cannot happen under Y's lock. The linker then exports Y and sends a
// `link_request`; the peer
// links X with its proxy of Y, quietly (`quiet_link_changes`: the peer's
// proxy must not send the link back). Unlinking takes the same way.
//
// Exit messages then need nothing of their own: when X ends, the peer
// reports it down and this node terminates proxy_X with X's reason, which
// CAF turns into an exit message to Y (as for any linked actor that ends);
// when Y ends, the peer hears of it the same way (Y is exported) and its
// proxy of Y ends, sending X the exit message. When the link goes down,
// every proxy ends with the link's reason (`remote_link_unreachable`), so
// every actor linked to an actor of the lost node gets its exit message.
// The exit message a dying Y sends proxy_X directly is therefore not
// forwarded (`remote_proxy::enqueue`), or X would get two.
//
// The linker handles changes in the order they were posted, so a link and an
// unlink made one after the other reach the peer in that order; a Y that ends
// before its link_request is sent is reported down first, and the peer links X
// with an already terminated proxy, which CAF answers with an exit message at
// once.
//
// Thread-safety: `post_link_change` may be called under actor locks from any
// thread; the linker runs `send_link_change`, the dispatcher
// `apply_link_request`.
#pragma once

#include "wire/control.hpp"

#include <caf/abstract_actor.hpp>
#include <caf/actor_control_block.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/behavior.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/execution_unit.hpp>

#include <cstdint>
#include <memory>

namespace ferry::detail {

class link_state;

/// A link or unlink between `partner` (this node's actor) and the peer's
/// actor `target`, on its way to the linker. Node-local: not a wire type.
struct link_change {
  std::weak_ptr<link_state> link;
  uint64_t target = 0;
  caf::strong_actor_ptr partner;
  bool establish = true;
};

/// Posts a link_change to the linker of `link`'s node. Safe under the
/// locks of `partner` and of the peer's proxy.
void post_link_change(link_state& link, uint64_t target,
                      caf::abstract_actor* partner, bool establish);

/// The node's linker: for each link_change, exports the partner (when
/// linking) and sends the peer the link_request.
caf::behavior linker(caf::event_based_actor* self);

/// Applies a link_request of the peer of `link` (on the thread reading it).
void apply_link_request(link_state& link, const link_request& x,
                        caf::execution_unit* host);

/// While one lives on a thread, proxies made to link or unlink on that
/// thread record it without telling the peer (it asked for the change).
class quiet_link_changes {
public:
  quiet_link_changes() noexcept;
  ~quiet_link_changes();
  quiet_link_changes(const quiet_link_changes&) = delete;
  quiet_link_changes& operator=(const quiet_link_changes&) = delete;

  /// Whether one lives on the calling thread.
  static bool active() noexcept;

private:
  bool previous_;
};

} // namespace ferry::detail

// Never serialized: it holds a weak pointer to a link.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ferry::detail::link_change)
