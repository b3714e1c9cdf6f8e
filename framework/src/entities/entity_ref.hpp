// entity_ref: the handle through which a program reaches one entity.
//
// `entities::ref(type, key)` returns one of these as a `caf::actor`: what is
// sent or requested through it goes, on the sender's thread, to the
// node's router (entities/router.hpp) as a call for (type, key), with the
// sender and message id kept, so a request's answer comes from the entity.
// The handle never terminates while the node's entities run; after that, a
// request through it is answered with `entity_unavailable`. Sent to another
// node in a message, it arrives as a proxy through this node.
//
// Thread-safety: `enqueue` may be called from any thread, like any
// actor's.
#pragma once

#include "entities/router.hpp"

#include <caf/actor_config.hpp>
#include <caf/monitorable_actor.hpp>

#include <memory>
#include <string>

namespace ferry::detail::entities {

class entity_ref final : public caf::monitorable_actor {
public:
  entity_ref(caf::actor_config& cfg, std::weak_ptr<router> r, std::string type,
             std::string key, uint32_t shard);

  void enqueue(caf::mailbox_element_ptr what,
               caf::execution_unit* host) override;

  const char* name() const override { return "ferry.entity_ref"; }

private:
  std::weak_ptr<router> router_;
  const std::string type_;
  const std::string key_;
  const uint32_t shard_;
};

} // namespace ferry::detail::entities
