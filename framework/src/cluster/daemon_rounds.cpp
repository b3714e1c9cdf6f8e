// daemon_rounds: what time drives in the cluster daemon (see
// cluster/daemon_state.hpp).
//
// One tick drives everything time does: a round of joining until the node
// is in, then gossip, heartbeats, reachability and downing. The tick comes
// every `min(gossip_interval, heartbeat_interval)`; each round checks
// whether its own interval has passed.
#include "cluster/daemon_state.hpp"

#include "cluster/protocol.hpp"

#include "ferry/errc.hpp"

#include <caf/all.hpp>

#include <algorithm>

namespace ferry::detail::cluster {

namespace {

/// How long an address whose dial failed rests before the next dial.
constexpr auto redial_pause = std::chrono::milliseconds{500};

} // namespace

// Connects to the daemon at `address` on a detached actor of its own; `done`
// gets the daemon, or nothing when the dial failed.
void dial(daemon_actor* self, const std::string& address,
          std::function<void(caf::actor)> done) {
  auto& st = self->state;
  auto now = st.s.time->now();
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
        st.redial_after[address] = st.s.time->now() + redial_pause;
        if (auto line = st.dial_log->pass("cluster: cannot reach " + address +
                                          ": " + render(err)))
          st.host->log(*line);
        done(caf::actor{});
      });
}

// Keeps `whom` as the daemon of incarnation `uid` until its proxy goes
// down with its link.
void add_peer(daemon_actor* self, uint64_t uid, const caf::actor& whom) {
  if (!whom)
    return;
  if (refuse_as_downed(self, uid))
    return; // a dial that was under way when this node went down or left
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
  auto now = st.s.time->now();
  std::vector<std::string> others;
  for (auto& seed : st.s.cfg.seeds)
    if (seed != st.s.cfg.address)
      others.push_back(seed);
  if (first_seed(st) &&
      (others.empty() || now - st.started >= st.s.cfg.seed_timeout)) {
    st.m->form();
    st.host->log("cluster " + st.s.cfg.name + ": formed by " +
                 st.s.cfg.address + " (no other seed answered)");
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
        [self, whom, seed](welcome_atom, const std::vector<std::byte>& bytes) {
          auto& st = self->state;
          st.join_pending = false;
          auto view = decode(bytes);
          if (!view) {
            st.host->log("cluster: a welcome that does not decode: " +
                         render(view.error()));
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
          st.host->log("cluster " + st.s.cfg.name + ": " + seed +
                       " did not let this node in: " + render(err));
        });
  });
}

// Sends the view to one member: one that has not seen it, if any.
void gossip_round(daemon_actor* self) {
  auto& st = self->state;
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
  auto now = st.s.time->now();
  auto targets = watch_targets(st);
  std::map<uint64_t, phi_detector> kept;
  std::map<uint64_t, double> phi;
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
    phi.emplace(m->uid, i->second.phi(now));
    kept.emplace(m->uid, std::move(i->second));
  }
  st.watched = std::move(kept);
  st.pub->set_phi(std::move(phi));
  if (any)
    changed(self);
}

void downing_round(daemon_actor* self) {
  auto& st = self->state;
  auto now = st.s.time->now();
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
    st.host->log("cluster " + st.s.cfg.name + ": this node's side lost (" +
                 to_string(st.s.policy) + "); it downs itself");
    any |= st.m->down(st.s.uid);
  }
  if (any)
    changed(self);
}

void tick(daemon_actor* self) {
  auto& st = self->state;
  auto now = st.s.time->now();
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
  self->delayed_send(self, st.s.time->real_wait(period), tick_atom::value);
}

} // namespace ferry::detail::cluster
