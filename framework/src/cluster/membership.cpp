// membership: see cluster/membership.hpp.
//
// A merge of concurrent views takes the pointwise maximum of the versions
// without counting a change of this node's: two nodes that merge the same
// two views reach the same value, version included, and need no further
// round to agree. Only changes made in this node's name count up its entry.
#include "cluster/membership.hpp"

#include <algorithm>
#include <tuple>

namespace ferry::detail::cluster {

const char* to_string(member_event::kind_t x) {
  switch (x) {
  case member_event::up:
    return "member_up";
  case member_event::unreachable:
    return "member_unreachable";
  case member_event::reachable:
    return "member_reachable";
  case member_event::down:
    return "member_down";
  case member_event::removed:
    return "member_removed";
  case member_event::converged:
    return "members_converged";
  }
  return "unknown";
}

membership::membership(std::string address, uint64_t uid, std::string name)
  : uid_(uid) {
  self_.address = std::move(address);
  self_.uid = uid;
  self_.name = std::move(name);
  self_.state = member_state::joining;
  view_.members.push_back(self_);
  view_.seen.insert(uid_);
}

void membership::form() {
  auto* me = view_.find(uid_);
  if (me == nullptr || me->state != member_state::joining)
    return;
  me->state = member_state::up;
  me->up_number = 1;
  joined_ = true;
  changed();
}

member membership::self() const {
  if (auto* me = view_.find(uid_))
    return *me;
  // Not in the view: removed (its incarnation a tombstone).
  auto out = self_;
  out.state = member_state::removed;
  return out;
}

void membership::changed() {
  ++view_.version[uid_];
  view_.seen.clear();
  view_.seen.insert(uid_);
}

bool membership::add_joining(const member& m) {
  if (m.uid == uid_ || view_.tombstones.count(m.uid) > 0 ||
      view_.find(m.uid) != nullptr || m.address.empty())
    return false;
  for (auto& other : view_.members)
    if (other.address == m.address && other.state < member_state::down)
      other.state = member_state::down;
  auto entry = m;
  entry.state = member_state::joining;
  entry.up_number = 0;
  auto pos = std::lower_bound(view_.members.begin(), view_.members.end(), entry,
                              member_less);
  view_.members.insert(pos, entry);
  changed();
  return true;
}

version_order membership::receive(const gossip& other) {
  auto order = compare(other.version, view_.version);
  switch (order) {
  case version_order::same:
    view_.seen.insert(other.seen.begin(), other.seen.end());
    break;
  case version_order::after:
    view_ = other;
    break;
  case version_order::before:
    return order;
  case version_order::concurrent:
    view_ = merge(view_, other);
    break;
  }
  view_.seen.insert(uid_);
  if (view_.find(uid_) != nullptr && view_.members.size() > 1)
    joined_ = true;
  return order;
}

bool membership::observe(uint64_t subject, bool reachable) {
  if (subject == uid_ || view_.find(subject) == nullptr)
    return false;
  auto& records = view_.reachability;
  auto pos = std::find_if(records.begin(), records.end(), [&](auto& r) {
    return r.observer == uid_ && r.subject == subject;
  });
  if (pos == records.end()) {
    if (reachable)
      return false;
    reachability_record rec{uid_, subject, false, ++record_version_};
    auto at = std::lower_bound(records.begin(), records.end(), rec,
                               [](auto& x, auto& y) {
                                 return std::tie(x.observer, x.subject) <
                                        std::tie(y.observer, y.subject);
                               });
    records.insert(at, rec);
  } else {
    if (pos->reachable == reachable)
      return false;
    pos->reachable = reachable;
    pos->version = ++record_version_;
  }
  changed();
  return true;
}

bool membership::down(uint64_t uid) {
  auto* m = view_.find(uid);
  if (m == nullptr || m->state >= member_state::down)
    return false;
  m->state = member_state::down;
  changed();
  return true;
}

bool membership::leave(uint64_t uid) {
  auto* m = view_.find(uid);
  if (m == nullptr || m->state > member_state::up)
    return false;
  m->state = member_state::leaving;
  changed();
  return true;
}

bool membership::converged() const {
  for (auto& m : view_.members) {
    if (m.state == member_state::down || m.state == member_state::exiting)
      continue;
    if (view_.unreachable(m.uid) || view_.seen.count(m.uid) == 0)
      return false;
  }
  return true;
}

std::optional<uint64_t> membership::leader() const {
  std::optional<uint64_t> joining;
  for (auto& m : view_.members) {
    if (view_.unreachable(m.uid))
      continue;
    if (m.state == member_state::up || m.state == member_state::leaving)
      return m.uid;
    if (m.state == member_state::joining && !joining)
      joining = m.uid;
  }
  return joining;
}

std::vector<member> membership::live_peers() const {
  std::vector<member> out;
  for (auto& m : view_.members)
    if (m.uid != uid_ && m.state < member_state::down &&
        !view_.unreachable(m.uid))
      out.push_back(m);
  return out;
}

std::vector<uint64_t> membership::unreachable() const {
  std::vector<uint64_t> out;
  for (auto& m : view_.members)
    if (view_.unreachable(m.uid))
      out.push_back(m.uid);
  return out;
}

bool membership::leader_actions() {
  if (!joined_ || leader() != uid_ || !converged())
    return false;
  uint64_t next_up = 1;
  for (auto& m : view_.members)
    next_up = std::max(next_up, m.up_number + 1);
  bool any = false;
  std::vector<uint64_t> gone;
  for (auto& m : view_.members) {
    switch (m.state) {
    case member_state::joining:
      m.state = member_state::up;
      m.up_number = next_up++;
      any = true;
      break;
    case member_state::leaving:
      m.state = member_state::exiting;
      any = true;
      break;
    case member_state::exiting:
    case member_state::down:
      if (m.uid != uid_)
        gone.push_back(m.uid);
      break;
    default:
      break;
    }
  }
  for (auto uid : gone) {
    view_.tombstones.insert(uid);
    std::erase_if(view_.members, [&](auto& m) { return m.uid == uid; });
    std::erase_if(view_.reachability, [&](auto& r) {
      return r.observer == uid || r.subject == uid;
    });
    any = true;
  }
  if (any)
    changed();
  return any;
}

std::vector<member_event>
membership::diff(const gossip& before, bool converged_before,
                 const gossip& after, bool converged_after, uint64_t self_uid) {
  std::vector<member_event> out;
  for (auto& m : after.members) {
    auto* prev = before.find(m.uid);
    auto was = prev != nullptr ? prev->state : member_state::joining;
    if (m.state == member_state::up && was == member_state::joining)
      out.push_back({member_event::up, m});
    bool now_unreachable = after.unreachable(m.uid);
    bool then_unreachable = prev != nullptr && before.unreachable(m.uid);
    if (m.state == member_state::down && (prev == nullptr || was != m.state)) {
      // A member that went unreachable and was downed within one change of
      // this view (another member saw it first) is reported unreachable
      // first, so watchers hear the same story on every member.
      if (now_unreachable && !then_unreachable && prev != nullptr)
        out.push_back({member_event::unreachable, m});
      out.push_back({member_event::down, m});
    }
    if (m.state >= member_state::down)
      continue;
    if (now_unreachable && !then_unreachable)
      out.push_back({member_event::unreachable, m});
    else if (!now_unreachable && then_unreachable)
      out.push_back({member_event::reachable, m});
  }
  for (auto& m : before.members)
    if (after.find(m.uid) == nullptr) {
      auto gone = m;
      gone.state = member_state::removed;
      out.push_back({member_event::removed, gone});
    }
  // A new version that arrives converged converges anew, even when the
  // version before it had converged too.
  if (converged_after && (!converged_before || after.version != before.version))
    if (auto* me = after.find(self_uid))
      out.push_back({member_event::converged, *me});
  return out;
}

} // namespace ferry::detail::cluster
