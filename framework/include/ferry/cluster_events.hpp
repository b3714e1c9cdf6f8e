// What a node tells the actors that watch the cluster's membership.
//
// `cluster::watch_members(whom)` makes the actor `whom` receive, as this
// node's view of the cluster changes: `member_up` when the leader moved a
// member up (every reachable member had seen it join), `member_unreachable`
// when some member's failure detector lost it, `member_reachable` when it
// answers again, `member_down` when it was downed (by a policy, an
// operator, or because a new incarnation of it joined), `member_removed`
// when it left the view for good (after leaving or being downed), and
// `members_converged` whenever every reachable member has seen the same
// view again. `cluster::members()` returns the view on demand. A subscriber
// of a registry key hears `registry_listing` (the actors under the key on
// every member) whenever that set changes. These are local messages of this
// node; they never travel.
//
// Usage:
//
//     n->cluster().watch_members(self);
//     self->become(
//       [](const ferry::member_up& x) { ... x.member.name ... },
//       [](const ferry::member_down& x) { ... x.member.address ... });
//
// Thread-safety: value types.
#pragma once

#include <caf/actor.hpp>
#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ferry {

/// Where a member is in its life cycle.
enum class member_status : uint8_t {
  joining,
  up,
  leaving,
  exiting,
  down,
  removed,
};

/// Returns the status' name ("up").
const char* to_string(member_status x);

/// One incarnation of a node in the cluster, as this node sees it.
struct member_info {
  /// Where others reach it ("host:port").
  std::string address;
  /// Its node name.
  std::string name;
  /// The incarnation: a node restarted at the same address has another.
  uint64_t uid = 0;
  member_status status = member_status::joining;
  /// Whether every member that watches it hears its heartbeats.
  bool reachable = true;
  /// The order in which members went up (1 is the oldest); 0 until up.
  uint64_t up_number = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, member_info& x) {
  return f(caf::meta::type_name("ferry.member_info"), x.address, x.name, x.uid,
           x.status, x.reachable, x.up_number);
}

#define FERRY_MEMBER_EVENT(type)                                               \
  struct type {                                                                \
    member_info member;                                                        \
  };                                                                           \
  template <class Inspector>                                                   \
  typename Inspector::result_type inspect(Inspector& f, type& x) {             \
    return f(caf::meta::type_name("ferry." #type), x.member);                  \
  }

/// The leader moved `member` up.
FERRY_MEMBER_EVENT(member_up)
/// A member that watches `member` stopped hearing its heartbeats.
FERRY_MEMBER_EVENT(member_unreachable)
/// `member` answers its watchers again.
FERRY_MEMBER_EVENT(member_reachable)
/// `member` was downed.
FERRY_MEMBER_EVENT(member_down)
/// `member` left the view for good.
FERRY_MEMBER_EVENT(member_removed)
/// Every reachable member has seen the same view (`member` is this node).
FERRY_MEMBER_EVENT(members_converged)

#undef FERRY_MEMBER_EVENT

/// The actors registered under `key` in the cluster registry, on every
/// member, as this node knows them: sent to the subscribers of `key`
/// (`cluster::subscribe_actors`) at once and whenever the set changes.
struct registry_listing {
  std::string key;
  std::vector<caf::actor> actors;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, registry_listing& x) {
  return f(caf::meta::type_name("ferry.registry_listing"), x.key, x.actors);
}

} // namespace ferry
