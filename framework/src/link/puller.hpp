// The puller: fetches large frames of cross-host messages in chunks.
//
// One actor per link, spawned when the first message with frames to pull
// arrives (link/pull_queue.hpp). See link/puller.cpp.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include <memory>

namespace ferry::detail {

class landings;
class link_state;
class relay_sources;

/// Starts the actor that pulls large frames of queued messages of `link` in
/// chunks, in order, and delivers the messages; chunk replies land through
/// `places`, and the store objects it pulls are relayed through `relays`.
caf::actor spawn_puller(caf::actor_system& sys, std::weak_ptr<link_state> link,
                        std::shared_ptr<landings> places,
                        std::shared_ptr<relay_sources> relays);

} // namespace ferry::detail
