// link_table: a node's links, by peer node id.
//
// A link is keyed by its peer's node id (64 random bits a node draws when
// it starts, wire/control.hpp `intro`): a restarted peer is a new peer. The
// table also remembers which address (host:port) led to which node, so
// that `connect` reuses a live link. A link is made under the table's lock
// (`admit`), so two connections of one peer make one link: the second finds
// the first (node/handshake.hpp says what becomes of it).
//
// A connect waiting for a link made by another connection (the peer's own,
// when both connected at once) can watch for it (`watch`).
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the table; watchers are called after it.
#pragma once

#include "link/link_state.hpp"
#include "thread_safety.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ferry::detail {

class link_table {
public:
  /// What `admit` found or made.
  struct admission {
    /// The live link to the peer (null once the table is closed).
    std::shared_ptr<link_state> link;
    /// Whether `admit` made it.
    bool made = false;
  };

  /// Makes a link.
  using link_factory = std::function<std::shared_ptr<link_state>()>;

  /// Returns the live link to `peer`, or makes one with `make`.
  admission admit(uint64_t peer, const link_factory& make);

  /// Returns the link to node `id`, or null.
  std::shared_ptr<link_state> find(uint64_t id) const;

  /// Returns the live link to the node named `name`, or null.
  std::shared_ptr<link_state> find(const std::string& name) const;

  /// Returns the live link that `address` (host:port) led to, or null.
  std::shared_ptr<link_state> find_by_address(const std::string& address) const;

  /// Notes that `address` leads to node `id`.
  void note_address(const std::string& address, uint64_t id);

  /// Removes `link` (once it is down) if it is still the one for its peer.
  void drop(const std::shared_ptr<link_state>& link);

  /// Returns every link.
  std::vector<std::shared_ptr<link_state>> all() const;

  /// Makes no link from now on and returns the links it held.
  std::vector<std::shared_ptr<link_state>> close();

  /// Removes every link.
  void clear();

  /// Calls `fn` (once, on the thread that made it) when `admit` makes a link
  /// to `peer`; returns a key for `unwatch`.
  uint64_t watch(uint64_t peer, std::function<void()> fn);

  /// Stops a watch (nothing happens when it fired already).
  void unwatch(uint64_t key);

private:
  struct watcher {
    uint64_t peer;
    std::function<void()> fn;
  };
  mutable mutex mtx_;
  std::map<uint64_t, std::shared_ptr<link_state>> links_ FERRY_GUARDED_BY(mtx_);
  std::map<std::string, uint64_t> by_address_ FERRY_GUARDED_BY(mtx_);
  std::map<uint64_t, watcher> watchers_ FERRY_GUARDED_BY(mtx_);
  uint64_t next_watch_ FERRY_GUARDED_BY(mtx_) = 1;
  bool closed_ FERRY_GUARDED_BY(mtx_) = false;
};

} // namespace ferry::detail
