// handle_translation: actor handles inside messages on one link.
//
// The families write an actor handle as a token (serializers'
// actor_handles.hpp) and ask the hook installed on the encoding or decoding
// thread what it means; a link installs this one around every encode and
// decode it makes. On sending, a handle to one of the peer's own actors (a
// proxy of this link) becomes kind 2 with the actor's id on the peer; any
// other handle — a local actor, or a proxy of a third node's actor — is
// exported on this link and becomes kind 1 with its id here, so the peer's
// proxy of it reaches it through this node (for a third node's actor, by
// forwarding, as CAF does). On receiving, kind 1 becomes the proxy of the
// peer's actor (counted against `max-proxies`), kind 2 this node's actor
// exported to (or exposed to) the peer, or a null handle once that actor
// has ended.
//
// Lifetime: an exported actor is held by the link until it ends or the link
// goes down, so an actor reached only through remote handles lives while
// its peer can address it, and is let go when the peer's node is gone.
//
// Thread-safety: stateless beyond the link; any thread.
#pragma once

#include "ferry/serializers/actor_handles.hpp"

namespace ferry::detail {

class link_state;

/// Token kinds of ferry's links.
enum class handle_kind : uint8_t {
  none = 0,
  /// An actor of the sending node (or one it forwards to).
  sender = 1,
  /// An actor of the receiving node.
  receiver = 2,
};

class handle_translation final : public serializers::handle_hook {
public:
  explicit handle_translation(link_state& link) : link_(link) {
    // nop
  }

  caf::expected<serializers::handle_token>
  save(const caf::strong_actor_ptr& x) override;

  caf::expected<caf::strong_actor_ptr>
  load(const serializers::handle_token& x) override;

private:
  link_state& link_;
};

} // namespace ferry::detail
