// daemon: see cluster/daemon.hpp.
//
// One tick drives everything time does: a round of joining until the node
// is in, then gossip, heartbeats, reachability, leader actions and downing.
// The tick comes every `min(gossip_interval, heartbeat_interval)`; each
// round checks whether its own interval has passed. Every change of the view
// ends in `changed`, which publishes the members and sends the watchers the
// events between the last published view and this one.
#include "cluster/daemon.hpp"

#include "cluster/membership.hpp"
#include "cluster/phi_detector.hpp"
#include "cluster/protocol.hpp"
#include "cluster/registry_table.hpp"

#include "ferry/errc.hpp"

#include "log_limiter.hpp"
#include "watcher_set.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>

namespace ferry::detail::cluster {

cluster_host::~cluster_host() = default;

namespace {

using clock = std::chrono::steady_clock;

/// How long an address whose dial failed rests before the next dial.
constexpr auto redial_pause = std::chrono::milliseconds{500};

member_status status_of(member_state x) {
  return static_cast<member_status>(x);
}

member_info info_of(const gossip& view, const member& m) {
  return member_info{m.address,     m.name, m.uid, status_of(m.state),
                     !view.unreachable(m.uid), m.up_number};
}

struct daemon_state {
  daemon_settings s;
  std::shared_ptr<cluster_host> host;
  std::shared_ptr<published_view> pub;
  std::unique_ptr<membership> m;
  // Peer daemons by incarnation, and dials under way (by address).
  std::map<uint64_t, caf::actor> peers;
  std::set<std::string> dialing;
  // An address whose dial failed is tried again after a pause.
  std::map<std::string, clock::time_point> redial_after;
  // Failed dials are logged at most once per 10 s.
  std::unique_ptr<log_limiter> dial_log
    = std::make_unique<log_limiter>(std::chrono::seconds{10});
  // The members this node watches, and their detectors.
  std::map<uint64_t, phi_detector> watched;
  // Joining: the seed asked next, whether a join is under way.
  size_t next_seed = 0;
  bool join_pending = false;
  clock::time_point started;
  clock::time_point last_gossip;
  clock::time_point last_heartbeat;
  // Downing: the unreachable set and since when it held still.
  std::vector<uint64_t> unreachable;
  clock::time_point unreachable_since;
  // The view last published, for the events.
  gossip published;
  bool published_converged = false;
  bool stopped = false;
  std::mt19937_64 rng{std::random_device{}()};
  // The cluster registry, and the local actors that follow its keys.
  registry_table registry;
  std::map<std::string, watcher_set> subscribers;

  static inline const char* name = "ferry.cluster";
};

using daemon_actor = caf::stateful_actor<daemon_state>;

bool first_seed(const daemon_state& st) {
  return !st.s.cfg.seeds.empty() && st.s.cfg.seeds.front() == st.s.cfg.address;
}

std::vector<std::byte> encoded_view(const daemon_state& st) {
  std::vector<std::byte> out;
  encode(st.m->view(), out);
  return out;
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

// Tells `to` of every local entry.
void send_entries(daemon_actor* self, const caf::actor& to) {
  auto& st = self->state;
  for (auto& [id, e] : st.registry.local())
    self->send(to, reg_update_atom::value, st.s.uid, id, e.key, e.who);
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

// Returns whether `uid` is a member that is neither down nor removed.
bool live_member(const daemon_state& st, uint64_t uid) {
  auto* m = st.m->view().find(uid);
  return m != nullptr && m->state < member_state::down;
}

// -- the view ----------------------------------------------------------------

void changed(daemon_actor* self) {
  auto& st = self->state;
  auto& view = st.m->view();
  auto conv = st.m->converged();
  auto events = membership::diff(st.published, st.published_converged, view,
                                 conv, st.s.uid);
  std::vector<member_info> members;
  for (auto& m : view.members)
    members.push_back(info_of(view, m));
  st.pub->publish(std::move(members));
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
  auto me = st.m->self();
  if (!st.stopped && me.state >= member_state::down && st.m->joined()) {
    st.stopped = true;
    st.host->log("cluster " + st.s.cfg.name + ": this node ("
                 + st.s.cfg.address + ") is " + to_string(me.state)
                 + "; it no longer acts as a member (restart it to rejoin)");
  }
}

// Connects to the daemon at `address` on a detached actor of its own; `done`
// gets the daemon, or nothing when the dial failed.
void dial(daemon_actor* self, const std::string& address,
          std::function<void(caf::actor)> done) {
  auto& st = self->state;
  auto now = st.s.now();
  if (auto i = st.redial_after.find(address);
      i != st.redial_after.end() && now < i->second)
    return;
  if (!st.dialing.insert(address).second)
    return;
  auto host = st.host;
  auto dialer = self->spawn<caf::detached + caf::linked>(
    [host](caf::event_based_actor*) -> caf::behavior {
      return {
        [host](dial_atom, const std::string& to) -> caf::result<caf::actor> {
          auto result = host->dial(to);
          if (!result)
            return std::move(result.error());
          return std::move(*result);
        },
      };
    });
  auto finish = [self, dialer, address] {
    self->state.dialing.erase(address);
    self->state.redial_after.erase(address);
    self->unlink_from(dialer);
    self->send_exit(dialer, caf::exit_reason::user_shutdown);
  };
  self->request(dialer, caf::infinite, dial_atom::value, address)
    .then(
      [finish, done](caf::actor& whom) {
        finish();
        done(std::move(whom));
      },
      [self, finish, done, address](caf::error& err) {
        finish();
        auto& st = self->state;
        st.redial_after[address] = st.s.now() + redial_pause;
        if (auto line = st.dial_log->pass("cluster: cannot reach " + address
                                          + ": " + render(err)))
          st.host->log(*line);
        done(caf::actor{});
      });
}

// Keeps `whom` as the daemon of incarnation `uid` until its proxy goes
// down with its link.
void add_peer(daemon_actor* self, uint64_t uid, const caf::actor& whom) {
  if (!whom)
    return;
  auto& slot = self->state.peers[uid];
  if (slot == whom)
    return;
  slot = whom;
  self->monitor(whom);
  send_entries(self, whom);
}

void send_gossip(daemon_actor* self, const caf::actor& to) {
  auto& st = self->state;
  self->send(to, gossip_atom::value, st.s.cfg.name, st.s.uid, encoded_view(st),
             caf::actor_cast<caf::actor>(self));
}

// Asks the next seed to let this node in; forms the cluster as the first
// seed when no other seed answered within the seed timeout.
void join_round(daemon_actor* self) {
  auto& st = self->state;
  auto now = st.s.now();
  std::vector<std::string> others;
  for (auto& seed : st.s.cfg.seeds)
    if (seed != st.s.cfg.address)
      others.push_back(seed);
  if (first_seed(st)
      && (others.empty() || now - st.started >= st.s.cfg.seed_timeout)) {
    st.m->form();
    st.host->log("cluster " + st.s.cfg.name + ": formed by "
                 + st.s.cfg.address + " (no other seed answered)");
    changed(self);
    return;
  }
  if (others.empty() || st.join_pending)
    return;
  auto seed = others[st.next_seed++ % others.size()];
  st.join_pending = true;
  dial(self, seed, [self, seed](caf::actor whom) {
    auto& st = self->state;
    if (!whom || st.m->joined()) {
      st.join_pending = false;
      return;
    }
    auto me = st.m->self();
    self
      ->request(whom, st.s.cfg.seed_timeout, join_atom::value, st.s.cfg.name,
                protocol_version, me.address, me.name, me.uid,
                caf::actor_cast<caf::actor>(self))
      .then(
        [self, whom, seed](welcome_atom,
                           const std::vector<std::byte>& bytes) {
          auto& st = self->state;
          st.join_pending = false;
          auto view = decode(bytes);
          if (!view) {
            st.host->log("cluster: a welcome that does not decode: "
                         + render(view.error()));
            return;
          }
          if (view->find(st.s.uid) == nullptr) {
            st.host->log("cluster: a welcome that does not hold this node");
            return;
          }
          st.m->receive(*view);
          for (auto& m : view->members)
            if (m.address == seed)
              add_peer(self, m.uid, whom);
          changed(self);
        },
        [self, seed](caf::error& err) {
          auto& st = self->state;
          st.join_pending = false;
          st.host->log("cluster " + st.s.cfg.name + ": " + seed
                       + " did not let this node in: " + render(err));
        });
  });
}

// Sends the view to one member: one that has not seen it, if any.
void gossip_round(daemon_actor* self) {
  auto& st = self->state;
  st.m->leader_actions();
  changed(self);
  auto peers = st.m->live_peers();
  std::vector<const member*> unseen;
  std::vector<const member*> any;
  for (auto& p : peers) {
    if (!st.peers.count(p.uid)) {
      auto uid = p.uid;
      dial(self, p.address,
           [self, uid](caf::actor whom) { add_peer(self, uid, whom); });
      continue;
    }
    any.push_back(&p);
    if (!st.m->view().seen.count(p.uid))
      unseen.push_back(&p);
  }
  auto& pool = unseen.empty() ? any : unseen;
  if (pool.empty())
    return;
  std::uniform_int_distribution<size_t> pick{0, pool.size() - 1};
  send_gossip(self, st.peers[pool[pick(st.rng)]->uid]);
}

// The members this node watches: the `monitored_by` incarnations after it
// in the ring of live members, sorted by uid.
std::vector<const member*> watch_targets(const daemon_state& st) {
  std::vector<const member*> ring;
  for (auto& m : st.m->view().members)
    if (m.state < member_state::down)
      ring.push_back(&m);
  std::sort(ring.begin(), ring.end(),
            [](auto* x, auto* y) { return x->uid < y->uid; });
  auto me = std::find_if(ring.begin(), ring.end(),
                         [&](auto* m) { return m->uid == st.s.uid; });
  std::vector<const member*> out;
  if (me == ring.end())
    return out;
  auto n = std::min(st.s.cfg.monitored_by, ring.size() - 1);
  auto pos = static_cast<size_t>(me - ring.begin());
  for (size_t k = 1; k <= n; ++k)
    out.push_back(ring[(pos + k) % ring.size()]);
  return out;
}

void heartbeat_round(daemon_actor* self) {
  auto& st = self->state;
  auto now = st.s.now();
  auto targets = watch_targets(st);
  std::map<uint64_t, phi_detector> kept;
  phi_detector::settings ps;
  ps.acceptable_pause = st.s.cfg.acceptable_pause;
  ps.first_estimate = st.s.cfg.heartbeat_interval;
  bool any = false;
  for (auto* m : targets) {
    auto i = st.watched.find(m->uid);
    if (i == st.watched.end()) {
      // A member watched from now on counts as heard now, so that one that
      // never answers still becomes unreachable.
      phi_detector d{ps};
      d.heartbeat(now);
      i = st.watched.emplace(m->uid, std::move(d)).first;
    }
    auto peer = st.peers.find(m->uid);
    if (peer != st.peers.end()) {
      self->send(peer->second, heartbeat_atom::value, st.s.uid,
                 caf::actor_cast<caf::actor>(self));
    } else {
      auto uid = m->uid;
      dial(self, m->address,
           [self, uid](caf::actor whom) { add_peer(self, uid, whom); });
    }
    bool ok = i->second.available(now, st.s.cfg.phi_threshold);
    any |= st.m->observe(m->uid, ok);
    kept.emplace(m->uid, std::move(i->second));
  }
  st.watched = std::move(kept);
  if (any)
    changed(self);
}

void downing_round(daemon_actor* self) {
  auto& st = self->state;
  auto now = st.s.now();
  auto unreachable = st.m->unreachable();
  if (unreachable != st.unreachable) {
    st.unreachable = unreachable;
    st.unreachable_since = now;
    return;
  }
  if (unreachable.empty() || now - st.unreachable_since < st.s.cfg.stable_after)
    return;
  auto verdict = decide(st.s.policy, st.m->view(), st.s.uid);
  bool any = false;
  for (auto uid : verdict.down)
    any |= st.m->down(uid);
  if (verdict.down_self) {
    st.host->log("cluster " + st.s.cfg.name + ": this node's side lost ("
                 + to_string(st.s.policy) + "); it downs itself");
    any |= st.m->down(st.s.uid);
  }
  if (any)
    changed(self);
}

void tick(daemon_actor* self) {
  auto& st = self->state;
  auto now = st.s.now();
  if (!st.m->joined()) {
    join_round(self);
  } else if (!st.stopped) {
    if (now - st.last_heartbeat >= st.s.cfg.heartbeat_interval) {
      st.last_heartbeat = now;
      heartbeat_round(self);
    }
    if (now - st.last_gossip >= st.s.cfg.gossip_interval) {
      st.last_gossip = now;
      gossip_round(self);
    }
    downing_round(self);
  }
  auto period = std::min(st.s.cfg.gossip_interval, st.s.cfg.heartbeat_interval);
  self->delayed_send(self, period, tick_atom::value);
}

caf::behavior daemon_fun(daemon_actor* self, daemon_settings s,
                         std::shared_ptr<cluster_host> host,
                         std::shared_ptr<published_view> view) {
  auto& st = self->state;
  st.s = std::move(s);
  st.host = std::move(host);
  st.pub = std::move(view);
  st.m = std::make_unique<membership>(st.s.cfg.address, st.s.uid,
                                      st.s.node_name);
  st.started = st.s.now();
  changed(self);
  self->set_down_handler([self](caf::down_msg& x) {
    std::erase_if(self->state.peers,
                  [&](auto& kv) { return kv.second.address() == x.source; });
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
          "node " + name + " at " + address + " asks to join cluster '"
            + cluster + "' (protocol " + std::to_string(protocol)
            + "); this node is in cluster '" + st.s.cfg.name + "' (protocol "
            + std::to_string(protocol_version) + ")");
      if (!st.m->joined() && first_seed(st)) {
        // Asked as the first seed: no other node can have formed the
        // cluster, so this one forms it now.
        st.m->form();
        changed(self);
      }
      if (!st.m->joined() || st.stopped)
        return caf::make_error(errc::cluster_refused,
                               "node " + st.s.node_name + " at "
                                 + st.s.cfg.address
                                 + " is not a member of cluster '"
                                 + st.s.cfg.name + "'; ask another seed");
      if (st.m->add_joining(member{address, uid, member_state::joining, 0,
                                   name})) {
        st.host->log("cluster " + st.s.cfg.name + ": " + name + " at "
                     + address + " joins");
        changed(self);
      }
      add_peer(self, uid, daemon);
      return {welcome_atom::value, encoded_view(st)};
    },
    [self](gossip_atom, const std::string& cluster, uint64_t from,
           const std::vector<std::byte>& bytes, const caf::actor& daemon) {
      auto& st = self->state;
      if (cluster != st.s.cfg.name || st.stopped)
        return;
      auto view = decode(bytes);
      if (!view) {
        st.host->log("cluster: gossip from " + std::to_string(from)
                     + " that does not decode: " + render(view.error()));
        return;
      }
      if (view->find(st.s.uid) == nullptr
          && view->tombstones.count(st.s.uid) == 0)
        return; // a view from before this node joined
      if (!st.peers.count(from))
        add_peer(self, from, daemon);
      if (st.m->receive(*view) == version_order::before && daemon)
        send_gossip(self, daemon);
      changed(self);
    },
    [self](heartbeat_atom, uint64_t, const caf::actor& from) {
      auto& st = self->state;
      if (!st.stopped && from)
        self->send(from, heartbeat_ack_atom::value, st.s.uid);
    },
    [self](heartbeat_ack_atom, uint64_t uid) {
      auto& st = self->state;
      auto i = st.watched.find(uid);
      if (i != st.watched.end())
        i->second.heartbeat(st.s.now());
    },
    [self](leave_atom) {
      auto& st = self->state;
      if (st.m->leave(st.s.uid)) {
        changed(self);
        for (auto& [uid, whom] : st.peers)
          send_gossip(self, whom);
      }
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
      if (!live_member(st, from))
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
    [self](down_atom, const std::string& address) -> caf::result<bool> {
      auto& st = self->state;
      bool any = false;
      for (auto& m : st.m->view().members)
        if (m.address == address)
          any |= st.m->down(m.uid);
      if (any)
        changed(self);
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
