// membership: one node's copy of the cluster's view and the rules that move
// members through their life cycle.
//
// The view is a `gossip` (cluster/gossip.hpp). This node changes it only in
// its own name: it adds a joining node that asked it, marks members it
// watches unreachable or reachable again, downs or leaves members on an
// operator's or a policy's word, and, while it is the leader, moves members
// on. Every change counts up this node's entry in the version vector and
// leaves only this node in `seen`; gossip from others merges in
// (`receive`).
//
// Convergence: every member that is neither down nor exiting is reachable
// (from every observer that is not down) and has seen the current version.
// The leader is the first member (by address) that is up or leaving and
// reachable (or, before any is up, the first joining one). Only at
// convergence, and only the leader, moves members: joining to up (numbered,
// the oldest first), leaving to exiting, exiting and down to removed (their
// incarnations become tombstones). So every member up was seen joining by
// every reachable member, and two leaders never disagree for long: their
// views converge first.
//
// Time is not read here; failure detection and downing policies decide when
// to call `observe` and `down`. Thread-safety: none; the cluster actor owns
// it.
#pragma once

#include "cluster/gossip.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ferry::detail::cluster {

/// What changed for one member between two views, as `watch_members`
/// reports it.
struct member_event {
  enum kind_t : uint8_t {
    up,
    unreachable,
    reachable,
    down,
    removed,
    converged,
  };
  kind_t kind;
  /// The member (for `converged`: this node).
  member who;

  friend bool operator==(const member_event&, const member_event&) = default;
};

/// Returns the kind's name ("member_up").
const char* to_string(member_event::kind_t x);

class membership {
public:
  /// A node that has not joined a cluster yet: its view holds itself,
  /// joining.
  membership(std::string address, uint64_t uid, std::string name = {});

  /// Forms a new cluster of this node alone, up.
  void form();

  /// Returns this node's member entry (its state as the view says;
  /// `removed` once its incarnation is a tombstone).
  member self() const;

  /// Returns the view.
  const gossip& view() const noexcept { return view_; }

  /// Returns whether this node is in a cluster (its view holds another
  /// member, or it formed one).
  bool joined() const noexcept { return joined_; }

  /// Adds `m` as joining (a node that asked this one to join). An older
  /// incarnation at the same address is downed: a restarted node replaces
  /// the one it was. Returns false (and changes nothing) when `m`'s
  /// incarnation is a tombstone or already known.
  bool add_joining(const member& m);

  /// Merges `other` in. Returns how `other`'s version related to this
  /// view's before the merge (`before`: this view was newer; the sender
  /// should get it back).
  version_order receive(const gossip& other);

  /// Records that this node sees `subject` as reachable or not. Returns
  /// whether the view changed.
  bool observe(uint64_t subject, bool reachable);

  /// Marks `uid` down. Returns whether the view changed.
  bool down(uint64_t uid);

  /// Marks `uid` leaving (it may be this node). Returns whether the view
  /// changed.
  bool leave(uint64_t uid);

  /// Returns whether the view has converged (see the file comment).
  bool converged() const;

  /// Returns the leader's incarnation, if there is one.
  std::optional<uint64_t> leader() const;

  /// Returns the members (other than this node) that are reachable and
  /// neither down nor removed: the ones this node gossips to and links to.
  std::vector<member> live_peers() const;

  /// Returns the incarnations held unreachable by some live observer.
  std::vector<uint64_t> unreachable() const;

  /// Moves members on when this node is the leader and the view converged.
  /// Returns whether the view changed.
  bool leader_actions();

  /// Returns the events that take a watcher from view `before` to view
  /// `after` (`converged_before` and `converged_after` say whether each
  /// had converged).
  static std::vector<member_event>
  diff(const gossip& before, bool converged_before, const gossip& after,
       bool converged_after, uint64_t self_uid);

private:
  // Counts a change of this node's: its version entry up, only it has seen.
  void changed();

  uint64_t uid_;
  member self_;
  gossip view_;
  bool joined_ = false;
  uint64_t record_version_ = 0;
};

} // namespace ferry::detail::cluster
