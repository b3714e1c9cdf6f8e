// handle_translation: actor handles on one link (see
// link/handle_translation.hpp).
#include "link/handle_translation.hpp"

#include "link/link_state.hpp"
#include "link/remote_proxy.hpp"

#include "ferry/errc.hpp"

namespace ferry::detail {

caf::expected<serializers::handle_token>
handle_translation::save(const caf::strong_actor_ptr& x) {
  if (auto proxy = dynamic_cast<remote_proxy*>(x->get());
      proxy != nullptr && proxy->serves(&link_))
    return serializers::handle_token{
      static_cast<uint8_t>(handle_kind::receiver), proxy->remote_id()};
  return serializers::handle_token{static_cast<uint8_t>(handle_kind::sender),
                                   link_.export_actor(x)};
}

caf::expected<caf::strong_actor_ptr>
handle_translation::load(const serializers::handle_token& x) {
  switch (static_cast<handle_kind>(x.kind)) {
  case handle_kind::sender:
    return link_.sender_proxy(x.id);
  case handle_kind::receiver:
    return link_.addressable(x.id);
  default:
    return caf::make_error(
      errc::decode_failed,
      "node " + link_.peer_name() + " sent an actor handle of unknown kind " +
        std::to_string(x.kind) + " (ferry's links know 1 and 2)");
  }
}

} // namespace ferry::detail
