// link_table: a node's links, by peer node, and the tokens of handshakes
// under way.
//
// A link is keyed by its peer's CAF node id; the table also remembers which
// address (host:port) led to which node, so that `connect` reuses a live
// link. Before a link exists, the table keeps the token this node names in
// its hellos to that peer (one per peer, so that handshakes crossing each
// other agree); the link takes it over when it is made. A token is kept
// when a handshake fails: the peer may have made its link with it all the
// same (a hello answered after the timeout), and the next hello must name
// the same token.
//
// A connect waiting in its handshake can watch for a link to its peer made
// meanwhile by the peer's own hello (`watch`): node/connect.cpp.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the table. A link is made under it (`admit`), so two
// handshakes with one peer make one link; watchers are called after it.
#pragma once

#include "link/link_state.hpp"

#include <caf/node_id.hpp>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace ferry::detail {

class link_table {
public:
  /// What `admit` found or made.
  struct admission {
    /// The live link to the peer (null on a conflict).
    std::shared_ptr<link_state> link;
    /// Whether `admit` made it.
    bool made = false;
  };

  /// Makes a link that expects `token` from the peer.
  using link_factory = std::function<std::shared_ptr<link_state>(uint64_t)>;

  /// Returns the live link to `peer`, or makes one with `make` and the
  /// token named in this node's hellos to `peer`. A live link whose peer
  /// expects another token than `peer_token` is a conflict: the result
  /// holds no link.
  admission admit(const caf::node_id& peer, uint64_t peer_token,
                  const link_factory& make);

  /// Returns the token this node names in its hello to `peer`: its live
  /// link's, else the one kept for its handshakes (made when first asked
  /// for).
  uint64_t inbound_token(const caf::node_id& peer);

  /// Returns the link to the CAF node `id`, or null.
  std::shared_ptr<link_state> find(const caf::node_id& id) const;

  /// Returns the link to the node named `name`, or null.
  std::shared_ptr<link_state> find(const std::string& name) const;

  /// Returns the live link that `address` (host:port) led to, or null.
  std::shared_ptr<link_state> find_by_address(const std::string& address) const;

  /// Notes that `address` leads to node `id`.
  void note_address(const std::string& address, const caf::node_id& id);

  /// Removes the link to `id` once it is down.
  void drop(const caf::node_id& id);

  /// Returns every link.
  std::vector<std::shared_ptr<link_state>> all() const;

  /// Removes every link.
  void clear();

  /// Calls `fn` (once, on the thread that made it) when `admit` makes a link
  /// to `peer`; returns a key for `unwatch`.
  uint64_t watch(const caf::node_id& peer, std::function<void()> fn);

  /// Stops a watch (nothing happens when it fired already).
  void unwatch(uint64_t key);

private:
  /// See `inbound_token` (requires `mtx_`).
  uint64_t inbound_token_locked(const caf::node_id& peer);

  mutable std::mutex mtx_;
  std::map<caf::node_id, std::shared_ptr<link_state>> links_;
  std::map<std::string, caf::node_id> by_address_;
  std::map<caf::node_id, uint64_t> tokens_;
  std::random_device random_;
  struct watcher {
    caf::node_id peer;
    std::function<void()> fn;
  };
  std::map<uint64_t, watcher> watchers_;
  uint64_t next_watch_ = 1;
};

} // namespace ferry::detail
