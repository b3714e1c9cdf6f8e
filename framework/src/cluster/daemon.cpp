// daemon: see cluster/daemon.hpp and cluster/daemon_state.hpp.
//
// This file answers the daemon's messages and publishes the view: every
// change of the view ends in `changed`, which publishes the members, sends
// the watchers the events between the last published view and this one,
// ends the links to members that went down (to every member when this node
// went down), lets the leader act on the change (and publishes that too),
// and sends a new version of the view at once to every peer that has not
// seen it, so that a change spreads in one round trip rather than one gossip
// round per member.
#include "cluster/daemon_state.hpp"

#include "cluster/protocol.hpp"

#include "ferry/errc.hpp"

#include <caf/all.hpp>

#include <algorithm>

namespace ferry::detail::cluster {

cluster_host::~cluster_host() = default;

namespace {

member_status status_of(member_state x) {
  return static_cast<member_status>(x);
}

member_info info_of(const gossip& view, const member& m) {
  return member_info{
    m.address,  m.name, m.uid, status_of(m.state), !view.unreachable(m.uid),
    m.up_number};
}

// -- the registry ----------------------------------------------------------

// Sends the subscribers of `key` its actors.
void tell_subscribers(daemon_actor* self, const std::string& key) {
  auto& st = self->state;
  auto i = st.subscribers.find(key);
  if (i == st.subscribers.end())
    return;
  auto msg = caf::make_message(registry_listing{key, st.registry.find(key)});
  for (auto& whom : i->second.live())
    whom->enqueue(nullptr, caf::make_message_id(), msg, nullptr);
}

// A member went down or was removed: its entries go.
void forget_entries(daemon_actor* self, uint64_t uid) {
  for (auto& key : self->state.registry.drop_member(uid))
    tell_subscribers(self, key);
}

// A local actor under some key ended: its entries go, everywhere.
void local_actor_ended(daemon_actor* self, const caf::actor_addr& who) {
  auto& st = self->state;
  for (auto& [id, key] : st.registry.remove_local(who)) {
    for (auto& [uid, to] : st.peers)
      self->send(to, reg_remove_atom::value, st.s.uid, id);
    tell_subscribers(self, key);
  }
}

// Returns whether `uid` was a member that is down or removed now. Entries
// from an incarnation this node does not know yet are kept: they may come
// before the gossip that names it.
bool gone_member(const daemon_state& st, uint64_t uid) {
  auto& view = st.m->view();
  if (view.tombstones.count(uid))
    return true;
  auto* m = view.find(uid);
  return m != nullptr && m->state >= member_state::down;
}

// Why this node ends its link to a member that went down.
caf::error downed_error(const daemon_state& st, const member_info& who) {
  return caf::make_error(errc::link_down,
                         "cluster " + st.s.cfg.name + " downed member " +
                           who.name + " at " + who.address +
                           "; its links end (it rejoins only as a new "
                           "incarnation, after a restart)");
}

// Why a downed node ends its links to the members.
caf::error downed_self_error(const daemon_state& st) {
  return caf::make_error(errc::link_down, "this node was downed from cluster " +
                                            st.s.cfg.name +
                                            "; its links to the members end");
}

// This node is no member any more: it stops acting as one. A node that
// was downed ends its links to every other member; one that left keeps them
// (what it queued still goes out, and its program ends them when it stops
// the node).
void stop_membership(daemon_actor* self) {
  auto& st = self->state;
  st.stopped = true;
  st.watched.clear();
  st.pub->set_phi({});
  if (st.left) {
    st.host->log("cluster " + st.s.cfg.name + ": this node (" +
                 st.s.cfg.address + ") left the cluster");
    return;
  }
  st.host->log("cluster " + st.s.cfg.name + ": this node (" + st.s.cfg.address +
               ") is " + to_string(st.m->self().state) +
               "; it no longer acts as a member and ends its links to the "
               "members (restart it to rejoin)");
  auto why = downed_self_error(st);
  for (auto& m : st.m->view().members)
    if (m.uid != st.s.uid)
      st.host->disconnect(m.uid, why);
  st.peers.clear();
}

} // namespace

bool refuse_as_downed(daemon_actor* self, uint64_t uid) {
  auto& st = self->state;
  if (!st.stopped)
    return false;
  if (!st.left)
    st.host->disconnect(uid, downed_self_error(st));
  return true;
}

bool first_seed(const daemon_state& st) {
  return !st.s.cfg.seeds.empty() && st.s.cfg.seeds.front() == st.s.cfg.address;
}

std::vector<std::byte> encoded_view(const daemon_state& st) {
  std::vector<std::byte> out;
  encode(st.m->view(), out);
  return out;
}

void send_entries(daemon_actor* self, const caf::actor& to) {
  auto& st = self->state;
  for (auto& [id, e] : st.registry.local())
    self->send(to, reg_update_atom::value, st.s.uid, id, e.key, e.who);
}

namespace {

// The daemon of the member at `address` other than this node: null when no
// such member is in the view, `cluster_refused` (naming the address and
// then `why`) when this node has no link to it.
caf::expected<const caf::actor*>
peer_at(daemon_state& st, const std::string& address, const char* why) {
  for (auto& m : st.m->view().members) {
    if (m.address != address || m.uid == st.s.uid)
      continue;
    auto peer = st.peers.find(m.uid);
    if (peer == st.peers.end())
      return caf::make_error(errc::cluster_refused,
                             "node " + st.s.node_name +
                               " has no link to the member at " + address +
                               why);
    return &peer->second;
  }
  return static_cast<const caf::actor*>(nullptr);
}

// Publishes the members and sends the watchers the events between the view
// last published and the current one.
void publish_events(daemon_actor* self) {
  auto& st = self->state;
  auto& view = st.m->view();
  auto conv = st.m->converged();
  auto events = membership::diff(st.published, st.published_converged, view,
                                 conv, st.s.uid);
  std::vector<member_info> members;
  for (auto& m : view.members)
    members.push_back(info_of(view, m));
  st.pub->publish(std::move(members), st.m->leader(), conv);
  for (auto& e : events) {
    auto info = info_of(view, e.who);
    if (e.kind == member_event::removed)
      info.status = member_status::removed;
    switch (e.kind) {
    case member_event::up:
      st.pub->tell(caf::make_message(member_up{info}));
      break;
    case member_event::unreachable:
      info.reachable = false;
      st.pub->tell(caf::make_message(member_unreachable{info}));
      break;
    case member_event::reachable:
      st.pub->tell(caf::make_message(member_reachable{info}));
      break;
    case member_event::down:
      forget_entries(self, e.who.uid);
      if (e.who.uid != st.s.uid) {
        // The downed member hears of it before its link ends (the link
        // sends what it queued first), so that it stops too.
        if (auto peer = st.peers.find(e.who.uid); peer != st.peers.end())
          send_gossip(self, peer->second);
        st.host->disconnect(e.who.uid, downed_error(st, info));
      }
      st.pub->tell(caf::make_message(member_down{info}));
      break;
    case member_event::removed:
      forget_entries(self, e.who.uid);
      st.pub->tell(caf::make_message(member_removed{info}));
      break;
    case member_event::converged:
      st.pub->tell(caf::make_message(members_converged{info}));
      break;
    }
  }
  st.published = view;
  st.published_converged = conv;
}

} // namespace

void changed(daemon_actor* self) {
  auto& st = self->state;
  auto version_before = st.published.version;
  bool converged_before = st.published_converged;
  // What the last change brought is published before the leader acts on it:
  // a merge that downs a member can also converge the view, and the leader
  // then removes the member at once; watchers still hear it downed first.
  publish_events(self);
  if (!st.stopped && st.m->leader_actions())
    publish_events(self);
  // The convergence time: from the last new version of the view this node
  // saw to the moment every reachable member has seen it.
  auto& view = st.m->view();
  auto now = st.s.time->now();
  bool new_version = view.version != version_before;
  if (new_version)
    st.version_seen_at = now;
  if (st.published_converged && st.m->joined() &&
      (new_version || !converged_before))
    st.pub->set_convergence(now - st.version_seen_at);
  auto me = st.m->self();
  if (!st.stopped && me.state >= member_state::down && st.m->joined()) {
    stop_membership(self);
    return;
  }
  if (new_version && !st.stopped)
    for (auto& [uid, whom] : st.peers)
      if (!view.seen.count(uid))
        send_gossip(self, whom);
}

namespace {

caf::behavior daemon_fun(daemon_actor* self, daemon_settings s,
                         std::shared_ptr<cluster_host> host,
                         std::shared_ptr<published_view> view) {
  auto& st = self->state;
  st.s = std::move(s);
  st.host = std::move(host);
  st.pub = std::move(view);
  st.m =
    std::make_unique<membership>(st.s.cfg.address, st.s.uid, st.s.node_name);
  st.started = st.s.time->now();
  st.version_seen_at = st.started;
  changed(self);
  self->set_down_handler([self](caf::down_msg& x) {
    auto& st = self->state;
    for (auto i = st.peers.begin(); i != st.peers.end();) {
      if (i->second.address() != x.source) {
        ++i;
        continue;
      }
      // The entries of a daemon that never became a member go with its
      // link; a member's go when it is downed or removed.
      if (st.m->view().find(i->first) == nullptr)
        forget_entries(self, i->first);
      i = st.peers.erase(i);
    }
    local_actor_ended(self, x.source);
  });
  self->send(self, tick_atom::value);
  return {
    [self](tick_atom) { tick(self); },
    [self](join_atom, const std::string& cluster, uint64_t protocol,
           const std::string& address, const std::string& name, uint64_t uid,
           const caf::actor& daemon)
      -> caf::result<welcome_atom, std::vector<std::byte>> {
      auto& st = self->state;
      if (cluster != st.s.cfg.name || protocol != protocol_version)
        return caf::make_error(
          errc::cluster_refused,
          "node " + name + " at " + address + " asks to join cluster '" +
            cluster + "' (protocol " + std::to_string(protocol) +
            "); this node is in cluster '" + st.s.cfg.name + "' (protocol " +
            std::to_string(protocol_version) + ")");
      if (!st.m->joined() && first_seed(st)) {
        // Asked as the first seed: no other node can have formed the
        // cluster, so this one forms it now.
        st.m->form();
        changed(self);
      }
      if (!st.m->joined() || st.stopped)
        return caf::make_error(errc::cluster_refused,
                               "node " + st.s.node_name + " at " +
                                 st.s.cfg.address +
                                 " is not a member of cluster '" +
                                 st.s.cfg.name + "'; ask another seed");
      if (st.m->add_joining(
            member{address, uid, member_state::joining, 0, name})) {
        st.host->log("cluster " + st.s.cfg.name + ": " + name + " at " +
                     address + " joins");
        changed(self);
      }
      add_peer(self, uid, daemon);
      return {welcome_atom::value, encoded_view(st)};
    },
    [self](gossip_atom, const std::string& cluster, uint64_t from,
           const std::vector<std::byte>& bytes, const caf::actor& daemon) {
      auto& st = self->state;
      if (refuse_as_downed(self, from) || cluster != st.s.cfg.name)
        return;
      auto view = decode(bytes);
      if (!view) {
        st.host->log("cluster: gossip from " + std::to_string(from) +
                     " that does not decode: " + render(view.error()));
        return;
      }
      if (view->find(st.s.uid) == nullptr &&
          view->tombstones.count(st.s.uid) == 0)
        return; // a view from before this node joined
      if (!st.peers.count(from))
        add_peer(self, from, daemon);
      auto order = st.m->receive(*view);
      changed(self);
      // A sender with an older view, or one that does not know this node
      // has seen its view, hears this node's view back (so that convergence
      // takes round trips, not gossip rounds).
      if (daemon && !st.stopped &&
          (order == version_order::before || !view->seen.count(st.s.uid)))
        send_gossip(self, daemon);
    },
    [self](heartbeat_atom, uint64_t uid, const caf::actor& from) {
      if (!refuse_as_downed(self, uid) && from)
        self->send(from, heartbeat_ack_atom::value, self->state.s.uid);
    },
    [self](heartbeat_ack_atom, uint64_t uid) {
      auto& st = self->state;
      auto i = st.watched.find(uid);
      if (i != st.watched.end())
        i->second.heartbeat(st.s.time->now());
    },
    [self](leave_atom) {
      auto& st = self->state;
      if (st.m->leave(st.s.uid)) {
        st.left = true;
        changed(self);
        for (auto& [uid, whom] : st.peers)
          send_gossip(self, whom);
      }
    },
    [self](leave_atom, const std::string& address) -> caf::result<bool> {
      auto& st = self->state;
      if (address == st.s.cfg.address) {
        self->send(self, leave_atom::value);
        return true;
      }
      auto peer = peer_at(st, address,
                          " to ask it to leave; ask a member that reaches it, "
                          "or the member itself");
      if (!peer)
        return std::move(peer.error());
      if (*peer == nullptr)
        return false;
      self->send(**peer, leave_atom::value);
      st.host->log("cluster " + st.s.cfg.name + ": asked the member at " +
                   address + " to leave on an operator's word");
      return true;
    },
    [self](register_atom, const std::string& key,
           const caf::actor& whom) -> bool {
      auto& st = self->state;
      auto id = st.registry.add_local(key, whom);
      if (id == 0)
        return false;
      self->monitor(whom);
      for (auto& [uid, to] : st.peers)
        self->send(to, reg_update_atom::value, st.s.uid, id, key, whom);
      tell_subscribers(self, key);
      return true;
    },
    [self](find_atom, const std::string& key) {
      return self->state.registry.find(key);
    },
    [self](subscribe_atom, const std::string& key, const caf::actor& whom) {
      auto& st = self->state;
      st.subscribers[key].add(whom);
      self->send(whom, registry_listing{key, st.registry.find(key)});
    },
    [self](reg_update_atom, uint64_t from, uint64_t id, const std::string& key,
           const caf::actor& whom) {
      auto& st = self->state;
      if (gone_member(st, from))
        return;
      if (auto changed = st.registry.apply(from, id, key, whom, true);
          !changed.empty())
        tell_subscribers(self, changed);
    },
    [self](reg_remove_atom, uint64_t from, uint64_t id) {
      auto& st = self->state;
      if (auto changed = st.registry.apply(from, id, {}, {}, false);
          !changed.empty())
        tell_subscribers(self, changed);
    },
    [self](view_atom) { return encoded_view(self->state); },
    [self](figures_atom) { return self->state.host->figures_json(); },
    [self](figures_atom,
           const std::string& address) -> caf::result<std::string> {
      auto& st = self->state;
      if (address == st.s.cfg.address)
        return st.host->figures_json();
      auto peer = peer_at(st, address, "");
      if (!peer)
        return std::move(peer.error());
      if (*peer == nullptr)
        return std::string{};
      auto rp = self->make_response_promise<std::string>();
      self->request(**peer, std::chrono::seconds{2}, figures_atom::value)
        .then([rp](std::string& x) mutable { rp.deliver(std::move(x)); },
              [rp, address](caf::error& err) mutable {
                rp.deliver(caf::make_error(
                  errc::cluster_refused,
                  "the member at " + address +
                    " did not send its figures: " + render(err)));
              });
      return rp;
    },
    [self](down_atom, const std::string& address) -> caf::result<bool> {
      auto& st = self->state;
      bool any = false;
      for (auto& m : st.m->view().members)
        if (m.address == address)
          any |= st.m->down(m.uid);
      if (any) {
        st.host->log("cluster " + st.s.cfg.name + ": the member at " + address +
                     " is downed on an operator's word");
        changed(self);
      }
      return any;
    },
  };
}

} // namespace

caf::actor spawn_daemon(caf::actor_system& sys, daemon_settings settings,
                        std::shared_ptr<cluster_host> host,
                        std::shared_ptr<published_view> view) {
  return sys.spawn(daemon_fun, std::move(settings), std::move(host),
                   std::move(view));
}

} // namespace ferry::detail::cluster
