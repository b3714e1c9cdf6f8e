// The actors of a chaos node and the table of its links.
//
// `peer_table` holds, per peer name, the link epoch in use and the proxy of
// the peer's front actor: a connector thread (or the front actor, when a
// peer's hello arrives) sets it up, the front actor takes it down on
// `node_down`, and the workload threads read it. `front` is the node's
// published actor: it answers calls, notes one-way messages, relays a call
// to a handle it is given, hands objects to the object worker, takes
// hellos, and watches the node's links; it traps exits, since the peers'
// linked watchers link to it. `spawn_watchers` starts the two
// actors that watch a peer's front for one epoch, one monitoring it, one
// linked to it, both linked to the node's keeper so that one exit ends
// them when the node shuts down. Every event goes to the node's history (history_log.hpp);
// after `closing` is set, link events are no longer written (the run is
// ending and peers shut down).
//
// Thread-safety: `peer_table` may be used from any thread; the actors are
// CAF actors.
#pragma once

#include "chaos_messages.hpp"
#include "history_log.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/behavior.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ferry::chaos {

/// A link in use: the proxy of the peer's front actor and the link's epoch.
struct link_view {
  std::string peer;
  caf::actor proxy;
  std::string epoch;
};

/// The links of one node, by peer name. See the header comment.
class peer_table {
public:
  explicit peer_table(const std::vector<std::string>& names);

  /// Makes `epoch` the link in use to `name`.
  void up(const std::string& name, caf::actor proxy, std::string epoch);

  /// Forgets the link in use to `name`; counts a link end.
  void down(const std::string& name);

  /// Returns the link in use to `name`, if any.
  std::optional<link_view> live(const std::string& name);

  /// Returns the link in use to some peer other than `name`, if any;
  /// `pick` chooses among them.
  std::optional<link_view> other(const std::string& name, uint64_t pick);

  /// Returns the number of link ends to `name` so far.
  uint64_t downs(const std::string& name);

  /// Returns the number of peers with a link in use.
  size_t live_count();

  /// Waits until `name` has no link in use or `timeout` passed.
  void wait_down(const std::string& name, std::chrono::milliseconds timeout);

private:
  struct slot {
    std::optional<link_view> link;
    uint64_t downs = 0;
  };

  std::mutex mtx_;
  std::condition_variable cv_;
  std::map<std::string, slot> slots_;
};

/// What the node's actors share.
struct node_context {
  std::string name;
  std::string inc;
  std::shared_ptr<history_log> log;
  std::shared_ptr<peer_table> peers;
  std::shared_ptr<std::atomic<bool>> closing
    = std::make_shared<std::atomic<bool>>(false);
  /// Holds every watcher (an actor nobody holds ends as `unreachable`, and
  /// its links carry that to the peer's front); every watcher links itself
  /// to it, so its exit ends them all.
  caf::actor keeper;
};

/// The watchers a keeper holds.
struct keeper_state {
  std::vector<caf::actor> watchers;
};

/// Holds the watchers it is sent until it is told to exit (see
/// `node_context`).
caf::behavior keeper(caf::stateful_actor<keeper_state>* self);

/// Answers an object with its checksum.
caf::behavior object_worker(caf::event_based_actor* self);

/// The node's published actor. See the header comment.
caf::behavior front(caf::event_based_actor* self, node_context ctx,
                    caf::actor worker);

/// Starts the actors that monitor and link to `whom` for `epoch`; the
/// node's keeper holds them.
void spawn_watchers(caf::actor_system& sys,
                                       const node_context& ctx,
                                       const caf::actor& whom,
                                       const std::string& epoch);

/// Returns `x` rendered on one line.
std::string one_line(const caf::error& x);

} // namespace ferry::chaos
