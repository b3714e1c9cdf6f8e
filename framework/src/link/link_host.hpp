// link_host: what a link needs of its node, and nothing more.
//
// A link is a leaf: node → link → transport, one direction. It reaches its
// node only through this interface, which the node implements
// (node/node_impl.hpp): the actor system it makes proxies and helpers in,
// the registry and store its encoder and decoder use, the node's log, the
// actors the node exposes to every peer (by id, and by name for a peer's
// lookup), spawning the actor types the node registered, where inline store
// handles land while a frame is read, the node-wide parts of relaying
// (which peer each store object went to last, and the objects this node
// relays) and of links between actors (the node's linker), and taking a
// link down when its way to the peer ends. Those node-wide tables live in
// node/; a link sees only the calls below.
//
// Thread-safety: every member function may be called from any thread, as
// long as the link lives (a node outlives its links: it waits for the last
// one to go, `live_links`).
#pragma once

#include "activity_counter.hpp"
#include "clock.hpp"
#include "transfer/relay_registry.hpp"
#include "wire/control.hpp"
#include "wire/message.hpp"
#include "wire/relay_hint.hpp"

#include "ferry/serializers/registry.hpp"
#include "ferry/store/object_store.hpp"

#include <caf/actor_control_block.hpp>
#include <caf/actor_system.hpp>
#include <caf/error.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace ferry::detail {

class link_state;
struct link_change;

class link_host {
public:
  virtual ~link_host();

  /// Returns the node's actor system.
  virtual caf::actor_system& system() = 0;

  /// Returns the node's clock: every timeout and gap a link keeps reads it.
  virtual const clock& time() const = 0;

  /// Returns the node's registry.
  virtual serializers::registry& registry() = 0;

  /// Returns the node's store (null: none).
  virtual store::object_store* store() = 0;

  /// Returns the node's name.
  virtual const std::string& node_name() const = 0;

  /// Logs one line in the node's log.
  virtual void log(const std::string& line) const = 0;

  /// Returns an actor the node exposes to every peer, by id (null: none).
  virtual caf::strong_actor_ptr exposed(uint64_t id) const = 0;

  /// Returns the id of the actor the node exposes as `name` (empty: its
  /// default actor); `no_such_actor` naming what it exposes otherwise.
  virtual caf::expected<uint64_t> lookup(const std::string& name) const = 0;

  /// Spawns the actor type the peer of `link` asked for and exports it on
  /// the link; returns its id, or why not.
  virtual caf::expected<uint64_t>
  spawn(spawn_request& req, const std::shared_ptr<link_state>& link) = 0;

  /// Returns where inline store handles land while a frame is read.
  virtual import_landing& imports() = 0;

  /// The way of `link` to its peer ended (`why`): the node takes the link
  /// down and tells its watchers.
  virtual void link_lost(const std::shared_ptr<link_state>& link,
                         const caf::error& why) = 0;

  /// Returns the count of the node's live links (each holds one).
  virtual activity_counter& live_links() = 0;

  /// Notes that store object `object_id` goes to node `peer` now and
  /// returns the transfer's relay offer (transfer/relay_directory.hpp).
  virtual relay_offer offer_relay(uint64_t object_id,
                                  const std::string& peer) = 0;

  /// Returns the objects the node relays.
  virtual std::shared_ptr<relay_registry> relays() = 0;

  /// Returns the live link to the node named `name` (null: none), to pull
  /// a relayed object through.
  virtual std::shared_ptr<link_state> link_to(const std::string& name) = 0;

  /// Hands `x` to the node's linker (link/actor_links.hpp). Safe under
  /// actor locks.
  virtual void post_link_change(link_change x) = 0;
};

} // namespace ferry::detail
