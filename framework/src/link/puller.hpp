// The puller: fetches large frames of cross-host messages in chunks.
//
// One actor per link, spawned when the first message with frames to pull
// arrives (transfer/pull_queue.hpp). See link/puller.cpp.
#pragma once

#include "link/pending_asks.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/allowed_unsafe_message_type.hpp>

#include <memory>

namespace ferry::detail {

class link_state;
class relay_registry;

/// Starts the actor that pulls large frames of queued messages of `link` in
/// chunks, in order, and delivers the messages; the store objects it pulls
/// are relayed through `relays`.
caf::actor spawn_puller(caf::actor_system& sys, std::weak_ptr<link_state> link,
                        std::shared_ptr<relay_registry> relays);

} // namespace ferry::detail

// An answer reaches the puller as a message of its own process.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ferry::detail::pending_asks::answer)
