// entity_ref: a program's handle of one entity (see entities/entity_ref.hpp).
#include "entities/entity_ref.hpp"

#include "entities/protocol.hpp"

#include "ferry/errc.hpp"

#include <caf/make_message.hpp>
#include <caf/system_messages.hpp>

namespace ferry::detail::entities {

entity_ref::entity_ref(caf::actor_config& cfg, std::weak_ptr<router> r,
                       std::string type, std::string key, uint32_t shard)
  : caf::monitorable_actor(cfg),
    router_(std::move(r)),
    type_(std::move(type)),
    key_(std::move(key)),
    shard_(shard) {
  // nop
}

void entity_ref::enqueue(caf::mailbox_element_ptr what,
                         caf::execution_unit* host) {
  // An entity ends only when its host says: exit messages stop nothing.
  if (what->content().match_elements<caf::exit_msg>())
    return;
  auto r = router_.lock();
  if (!r) {
    refuse_call(*what,
                caf::make_error(errc::entity_unavailable,
                                "the node's entities have stopped: entity (\"" +
                                  type_ + "\", \"" + key_ +
                                  "\") is not reached through it any more"),
                host);
    return;
  }
  auto call = caf::message::concat(
    caf::make_message(call_atom::value, type_, key_, uint32_t{0}),
    what->move_content_to_message());
  r->route(shard_,
           caf::make_mailbox_element(std::move(what->sender), what->mid,
                                     std::move(what->stages), std::move(call)),
           host);
}

} // namespace ferry::detail::entities
