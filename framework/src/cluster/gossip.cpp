// gossip: see cluster/gossip.hpp.
//
// Members never hold `removed`: removing an incarnation puts its uid into
// the tombstones, and a merge drops every member and record of a tombstoned
// uid. Ties in a merge are broken by the values themselves (the later state,
// the lower up number, an unreachable record over a reachable one of the same
// version), never by which side a value came from, so that merge(x, y) ==
// merge(y, x).
#include "cluster/gossip.hpp"

#include "ferry/cluster_events.hpp"
#include "ferry/errc.hpp"

#include "wire/codec.hpp"

#include <algorithm>
#include <tuple>

namespace ferry::detail::cluster {

const char* to_string(member_state x) {
  return ferry::to_string(static_cast<member_status>(x));
}

bool member_less(const member& x, const member& y) {
  return std::tie(x.address, x.uid) < std::tie(y.address, y.uid);
}

version_order compare(const version_vector& x, const version_vector& y) {
  bool x_ahead = false;
  bool y_ahead = false;
  auto i = x.begin();
  auto j = y.begin();
  while (i != x.end() || j != y.end()) {
    if (j == y.end() || (i != x.end() && i->first < j->first)) {
      x_ahead |= i->second > 0;
      ++i;
    } else if (i == x.end() || j->first < i->first) {
      y_ahead |= j->second > 0;
      ++j;
    } else {
      x_ahead |= i->second > j->second;
      y_ahead |= j->second > i->second;
      ++i;
      ++j;
    }
  }
  if (x_ahead && y_ahead)
    return version_order::concurrent;
  if (x_ahead)
    return version_order::after;
  if (y_ahead)
    return version_order::before;
  return version_order::same;
}

const member* gossip::find(uint64_t uid) const {
  for (auto& m : members)
    if (m.uid == uid)
      return &m;
  return nullptr;
}

member* gossip::find(uint64_t uid) {
  for (auto& m : members)
    if (m.uid == uid)
      return &m;
  return nullptr;
}

bool gossip::unreachable(uint64_t uid) const {
  for (auto& r : reachability) {
    if (r.subject != uid || r.reachable)
      continue;
    auto* observer = find(r.observer);
    if (observer != nullptr && observer->state < member_state::down)
      return true;
  }
  return false;
}

namespace {

member merge_one(const member& x, const member& y) {
  auto out = x;
  out.state = std::max(x.state, y.state);
  if (x.up_number == 0 || y.up_number == 0)
    out.up_number = std::max(x.up_number, y.up_number);
  else
    out.up_number = std::min(x.up_number, y.up_number);
  // One incarnation has one name; should two views disagree, both pick the
  // same.
  out.name = std::max(x.name, y.name);
  return out;
}

bool record_less(const reachability_record& x, const reachability_record& y) {
  return std::tie(x.observer, x.subject) < std::tie(y.observer, y.subject);
}

// The record of one (observer, subject) pair that a merge keeps.
const reachability_record& later(const reachability_record& x,
                                 const reachability_record& y) {
  if (x.version != y.version)
    return x.version > y.version ? x : y;
  return x.reachable ? y : x;
}

// Walks two lists sorted by `less` in order and gives `keep` each value of
// one list only, and `both(a, b)` for a value in both.
template <class T, class Less, class Both, class Keep>
void merge_sorted(const std::vector<T>& xs, const std::vector<T>& ys, Less less,
                  Both both, Keep keep) {
  auto i = xs.begin();
  auto j = ys.begin();
  while (i != xs.end() || j != ys.end()) {
    if (j == ys.end() || (i != xs.end() && less(*i, *j)))
      keep(*i++);
    else if (i == xs.end() || less(*j, *i))
      keep(*j++);
    else
      keep(both(*i++, *j++));
  }
}

} // namespace

gossip merge(const gossip& x, const gossip& y) {
  gossip out;
  std::set_union(x.tombstones.begin(), x.tombstones.end(), y.tombstones.begin(),
                 y.tombstones.end(),
                 std::inserter(out.tombstones, out.tombstones.end()));
  auto dead = [&](uint64_t uid) {
    return out.tombstones.count(uid) > 0;
  };
  // Members: a sorted merge of two sorted lists.
  auto keep = [&](const member& m) {
    if (dead(m.uid))
      return;
    if (m.state == member_state::removed) {
      out.tombstones.insert(m.uid);
      return;
    }
    out.members.push_back(m);
  };
  merge_sorted(x.members, y.members, member_less, merge_one, keep);
  // Records of tombstoned incarnations (those removed just now included)
  // go too.
  merge_sorted(x.reachability, y.reachability, record_less, later,
               [&](const reachability_record& rec) {
                 if (!dead(rec.observer) && !dead(rec.subject))
                   out.reachability.push_back(rec);
               });
  out.version = x.version;
  for (auto& [uid, n] : y.version) {
    auto& mine = out.version[uid];
    mine = std::max(mine, n);
  }
  return out;
}

// -- encoding ----------------------------------------------------------------

namespace {

constexpr size_t max_records = 16 * max_members;
constexpr size_t max_tombstones = 65536;
constexpr size_t max_address = 255;

} // namespace

void encode(const gossip& x, std::vector<std::byte>& out) {
  wire::writer w{out};
  w.le32(static_cast<uint32_t>(x.members.size()));
  for (auto& m : x.members) {
    w.str(m.address);
    w.le64(m.uid);
    w.u8(static_cast<uint8_t>(m.state));
    w.le64(m.up_number);
    w.str(m.name);
  }
  w.le32(static_cast<uint32_t>(x.reachability.size()));
  for (auto& r : x.reachability) {
    w.le64(r.observer);
    w.le64(r.subject);
    w.u8(r.reachable ? 1 : 0);
    w.le64(r.version);
  }
  w.le32(static_cast<uint32_t>(x.tombstones.size()));
  for (auto uid : x.tombstones)
    w.le64(uid);
  w.le32(static_cast<uint32_t>(x.version.size()));
  for (auto& [uid, n] : x.version) {
    w.le64(uid);
    w.le64(n);
  }
  w.le32(static_cast<uint32_t>(x.seen.size()));
  for (auto uid : x.seen)
    w.le64(uid);
}

namespace {

// Reads a count of entries of at least `min_size` bytes each, refusing one
// above `bound` or above what the bytes left can hold.
size_t read_count(wire::reader& in, size_t bound, size_t min_size,
                  const char* what) {
  auto n = in.le32();
  if (n > bound) {
    in.fail(std::string{what} + ": " + std::to_string(n) +
            " entries, at most " + std::to_string(bound) + " taken");
    return 0;
  }
  if (static_cast<uint64_t>(n) * min_size > in.remaining()) {
    in.fail(std::string{what} + ": " + std::to_string(n) +
            " entries claimed, the gossip is shorter");
    return 0;
  }
  return n;
}

void read_uids(wire::reader& in, std::set<uint64_t>& out, size_t bound,
               const char* what) {
  auto n = read_count(in, bound, 8, what);
  for (size_t k = 0; k < n && in.ok(); ++k) {
    auto uid = in.le64();
    if (!out.empty() && uid <= *out.rbegin())
      in.fail(std::string{what} + ": incarnations out of order or repeated");
    out.insert(uid);
  }
}

} // namespace

caf::expected<gossip> decode(std::span<const std::byte> bytes) {
  wire::reader in{bytes, "gossip"};
  gossip out;
  auto n = read_count(in, max_members, 4 + 8 + 1 + 8 + 4, "members");
  out.members.reserve(n);
  for (size_t k = 0; k < n && in.ok(); ++k) {
    member m;
    m.address = in.str();
    m.uid = in.le64();
    auto state = in.u8();
    m.up_number = in.le64();
    m.name = in.str();
    if (m.address.empty() || m.address.size() > max_address)
      in.fail("a member's address has " + std::to_string(m.address.size()) +
              " bytes (1 to 255 taken)");
    else if (m.name.size() > max_address)
      in.fail("member " + m.address + " has a name of " +
              std::to_string(m.name.size()) + " bytes (at most 255 taken)");
    else if (state > static_cast<uint8_t>(member_state::down))
      in.fail("member " + m.address + " has unknown state " +
              std::to_string(state));
    else if (!out.members.empty() && !member_less(out.members.back(), m))
      in.fail("members out of order or repeated at " + m.address);
    m.state = static_cast<member_state>(state);
    out.members.push_back(std::move(m));
  }
  n = read_count(in, max_records, 8 + 8 + 1 + 8, "reachability");
  out.reachability.reserve(n);
  for (size_t k = 0; k < n && in.ok(); ++k) {
    reachability_record r;
    r.observer = in.le64();
    r.subject = in.le64();
    r.reachable = in.boolean();
    r.version = in.le64();
    if (!out.reachability.empty() && !record_less(out.reachability.back(), r))
      in.fail("reachability records out of order or repeated");
    out.reachability.push_back(r);
  }
  read_uids(in, out.tombstones, max_tombstones, "tombstones");
  n = read_count(in, 4 * max_members, 16, "version");
  for (size_t k = 0; k < n && in.ok(); ++k) {
    auto uid = in.le64();
    auto count = in.le64();
    if (!out.version.empty() && uid <= out.version.rbegin()->first)
      in.fail("version: incarnations out of order or repeated");
    out.version.emplace(uid, count);
  }
  read_uids(in, out.seen, max_members, "seen");
  if (auto err = in.finish())
    return err;
  return out;
}

} // namespace ferry::detail::cluster
