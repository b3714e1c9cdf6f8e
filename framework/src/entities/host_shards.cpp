// host: leases and hand-offs (see entities/host.hpp); calls and entities
// are in host.cpp.
//
// A shard's phases on one member: idle → acquiring (a lease call) → active,
// or → awaiting_handoff (granted as a hand-off: the previous holder's
// marker, after what it held, comes first) → active; active → handing_off
// (entities stopping) → idle (what waited passed on, the marker sent, the
// lease released to the new owner). A lease that was not renewed in time
// ends the shard at once: its entities are killed, so no activation
// outlives the lease that let it start.
#include "entities/host_state.hpp"

#include "entities/shard_map.hpp"

#include "ferry/errc.hpp"

#include <caf/send.hpp>

#include <algorithm>

namespace ferry::detail::entities {

namespace {

using std::chrono::milliseconds;

int64_t ms(clock::duration d) {
  return std::chrono::duration_cast<milliseconds>(d).count();
}

/// How long before the lease's end, measured from when its call left, the
/// holder stops a shard it could not renew: a tenth of the lease, at least
/// 100 ms (the entities must be gone before another member may take it).
clock::duration margin(const host_state& st) {
  return std::max<clock::duration>(st.s.cfg.lease / 10, milliseconds{100});
}

/// Takes the shard's calls in order, now that it is held.
void activate(host_actor* self, uint32_t shard) {
  auto& st = self->state;
  auto& sh = st.shards[shard];
  sh.phase = shard_phase::active;
  sh.handoff_seen = false;
  sh.incoming = false;
  auto waiting = std::move(sh.buffer);
  sh.buffer.clear();
  st.buffered -= std::min<uint64_t>(st.buffered, waiting.size());
  for (auto& x : waiting)
    deliver(self, shard, std::move(x));
}

/// Moves the shard's fence to `t`.
void hold_until(host_state& st, shard_state& sh, clock::time_point t) {
  if (!sh.fence)
    sh.fence = std::make_shared<lease_fence>(*st.s.time);
  sh.fence->hold_until(t);
}

} // namespace

void drop(host_actor* self, uint32_t shard, const std::string& why) {
  auto& st = self->state;
  auto& sh = st.shards[shard];
  if (!sh.entities.empty())
    log_limited(self, "shard " + std::to_string(shard) + ": " + why + "; its " +
                        std::to_string(sh.entities.size()) +
                        " entities stop now");
  for (auto& [id, e] : sh.entities) {
    e.stopping = true;
    self->send_exit(e.actor, caf::exit_reason::kill);
  }
  sh.end_hold();
  sh.phase = shard_phase::idle;
  sh.retry_at = st.s.time->now() + st.s.cfg.lease / 3;
}

namespace {

/// Asks for the lease of `shard`.
void acquire(host_actor* self, uint32_t shard) {
  auto& st = self->state;
  auto& sh = st.shards[shard];
  sh.phase = shard_phase::acquiring;
  sh.busy = true;
  auto sent = st.s.time->now();
  self
    ->request(st.s.lease_worker, caf::infinite, acquire_atom::value, shard,
              st.owner, ms(st.s.cfg.lease), ms(st.s.cfg.hand_off_timeout))
    .then(
      [self, shard, sent](lease_grant& x) {
        auto& st = self->state;
        auto& sh = st.shards[shard];
        sh.busy = false;
        if (st.stopped) {
          if (x.held)
            self->send(st.s.lease_worker, release_atom::value, shard, st.owner,
                       std::string{});
          return;
        }
        if (!x.held) {
          sh.phase = shard_phase::idle;
          auto wait = std::max(x.holder_left, x.reserved_left);
          sh.retry_at = st.s.time->now() +
                        std::clamp<clock::duration>(wait, milliseconds{50},
                                                    st.s.cfg.lease / 3);
          return;
        }
        sh.failure = caf::error{};
        sh.taken_at = sent;
        sh.epoch = x.epoch;
        hold_until(st, sh, sent + st.s.cfg.lease - margin(st));
        sh.since = st.s.time->now();
        if (x.taken && x.handed_off && !sh.handoff_seen)
          sh.phase = shard_phase::awaiting_handoff;
        else
          activate(self, shard);
      },
      [self, shard](caf::error& err) {
        auto& st = self->state;
        auto& sh = st.shards[shard];
        sh.busy = false;
        sh.phase = shard_phase::idle;
        sh.retry_at = st.s.time->now() + st.s.cfg.lease / 3;
        sh.failure = err;
        log_limited(self, "cannot take shard " + std::to_string(shard) + ": " +
                            render(err));
        // What waits would wait for a database that does not answer: it
        // hears why now (flushes pass: nothing waits before them).
        auto waiting = std::move(sh.buffer);
        sh.buffer.clear();
        st.buffered -= std::min<uint64_t>(st.buffered, waiting.size());
        for (auto& x : waiting) {
          if (x.content.match_element<flush_atom>(0)) {
            deliver(self, shard, std::move(x));
          } else {
            ++st.figures.refused;
            refuse_call(
              *caf::make_mailbox_element(x.sender, x.mid, {}, x.content),
              caf::make_error(errc::state_store_failed,
                              "node " + st.s.node_name + " cannot take shard " +
                                std::to_string(shard) + ": " + render(err)),
              self->context());
          }
        }
      });
}

/// Starts handing `shard` off to member `to`: its entities stop first.
void start_handoff(host_actor* self, uint32_t shard, uint64_t to) {
  auto& st = self->state;
  auto& sh = st.shards[shard];
  sh.phase = shard_phase::handing_off;
  sh.hand_to = to;
  sh.since = st.s.time->now();
  for (auto& [id, e] : sh.entities)
    stop_entity(self, e);
  entity_gone(self, shard);
}

/// The entities of `shard` have stopped: passes on what waited, then the
/// marker, then the lease.
void finish_handoff(host_actor* self, uint32_t shard) {
  auto& st = self->state;
  auto& sh = st.shards[shard];
  sh.phase = shard_phase::idle;
  sh.end_hold();
  ++st.figures.hand_offs;
  auto host = st.hosts.find(sh.hand_to);
  std::string hand_to;
  if (auto m = st.members.find(sh.hand_to); m != st.members.end())
    hand_to = lease_owner(m->second.name, sh.hand_to);
  if (host != st.hosts.end()) {
    auto waiting = std::move(sh.buffer);
    sh.buffer.clear();
    st.buffered -= std::min<uint64_t>(st.buffered, waiting.size());
    self->send(host->second, handoff_atom::value, shard, sh.epoch);
    for (auto& x : waiting)
      host->second->enqueue(caf::make_mailbox_element(std::move(x.sender),
                                                      x.mid, {},
                                                      std::move(x.content)),
                            self->context());
    self->send(host->second, handed_atom::value, shard, sh.epoch);
  } else {
    hand_to.clear(); // nobody to hand to: what waits stays here
  }
  sh.busy = true;
  self
    ->request(st.s.lease_worker, caf::infinite, release_atom::value, shard,
              st.owner, hand_to)
    .then([self, shard](bool) { self->state.shards[shard].busy = false; },
          [self, shard](caf::error& err) {
            auto& st = self->state;
            st.shards[shard].busy = false;
            st.s.log("cannot release shard " + std::to_string(shard) +
                     " (its lease runs out instead): " + render(err));
          });
}

} // namespace

void rebalance(host_actor* self) {
  auto& st = self->state;
  if (st.stopped)
    return;
  auto now = st.s.time->now();
  uint32_t moving = 0;
  for (auto& sh : st.shards)
    if (sh.phase == shard_phase::handing_off)
      ++moving;
  for (uint32_t shard = 0; shard < st.shards.size(); ++shard) {
    auto& sh = st.shards[shard];
    auto want = st.owner_of.empty() ? 0 : st.owner_of[shard];
    switch (sh.phase) {
    case shard_phase::idle:
      if (want == st.s.uid || sh.incoming) {
        if (!sh.busy && now >= sh.retry_at)
          acquire(self, shard);
      } else if (want != 0 && !sh.buffer.empty() && st.hosts.count(want) > 0) {
        // What waited here for another member's shard goes on to it, as a
        // fresh route (the views agree again).
        auto waiting = std::move(sh.buffer);
        sh.buffer.clear();
        st.buffered -= std::min<uint64_t>(st.buffered, waiting.size());
        for (auto& x : waiting)
          reroute(self, st.hosts[want], std::move(x));
      }
      break;
    case shard_phase::awaiting_handoff:
      if (now - sh.since >= st.s.cfg.hand_off_timeout) {
        st.s.log("shard " + std::to_string(shard) +
                 ": no hand-off came from its last holder within " +
                 std::to_string(ms(st.s.cfg.hand_off_timeout)) +
                 " ms (ferry.entities.hand-off-timeout); it starts without");
        activate(self, shard);
      }
      break;
    case shard_phase::active:
      if (want != 0 && want != st.s.uid && st.hosts.count(want) > 0 &&
          moving < st.s.cfg.max_moves) {
        start_handoff(self, shard, want);
        ++moving;
      }
      break;
    case shard_phase::handing_off:
      if (now - sh.since >= st.s.cfg.hand_off_timeout)
        for (auto& [id, e] : sh.entities)
          self->send_exit(e.actor, caf::exit_reason::kill);
      break;
    case shard_phase::acquiring:
      break;
    }
  }
}

void keep_leases(host_actor* self) {
  auto& st = self->state;
  auto now = st.s.time->now();
  auto held = [](const shard_state& sh) {
    return sh.phase == shard_phase::active ||
           sh.phase == shard_phase::awaiting_handoff ||
           sh.phase == shard_phase::handing_off;
  };
  for (uint32_t shard = 0; shard < st.shards.size(); ++shard) {
    auto& sh = st.shards[shard];
    if (held(sh) && sh.lease_passed())
      drop(self, shard, "its lease could not be renewed in time");
  }
  if (st.renewing || now - st.last_renew < st.s.cfg.lease / 3)
    return;
  if (std::none_of(st.shards.begin(), st.shards.end(), held))
    return;
  st.renewing = true;
  st.last_renew = now;
  self
    ->request(st.s.lease_worker, caf::infinite, renew_atom::value, st.owner,
              ms(st.s.cfg.lease))
    .then(
      [self, now, held](std::vector<uint32_t>& still) {
        auto& st = self->state;
        st.renewing = false;
        for (uint32_t shard = 0; shard < st.shards.size(); ++shard) {
          auto& sh = st.shards[shard];
          if (!held(sh) || sh.taken_at >= now)
            continue; // not held, or taken after this renewal left
          if (std::binary_search(still.begin(), still.end(), shard))
            hold_until(st, sh, now + st.s.cfg.lease - margin(st));
          else
            drop(self, shard, "another member took it");
        }
      },
      [self](caf::error& err) {
        auto& st = self->state;
        st.renewing = false;
        log_limited(self, "cannot renew the shards' leases: " + render(err));
      });
}

void on_handoff_begin(host_actor* self, uint32_t shard) {
  auto& st = self->state;
  auto& sh = st.shards[shard];
  if (sh.phase != shard_phase::idle || st.stopped)
    return;
  sh.incoming = true;
  sh.retry_at = {};
  rebalance(self);
}

void on_handoff(host_actor* self, uint32_t shard, uint64_t) {
  auto& st = self->state;
  auto& sh = st.shards[shard];
  if (sh.phase == shard_phase::awaiting_handoff)
    activate(self, shard);
  else
    sh.handoff_seen = true;
}

void entity_gone(host_actor* self, uint32_t shard) {
  auto& st = self->state;
  auto& sh = st.shards[shard];
  if (sh.phase == shard_phase::handing_off && sh.entities.empty())
    finish_handoff(self, shard);
  finish_shutdown(self);
}

void finish_shutdown(host_actor* self) {
  auto& st = self->state;
  if (!st.shutdown)
    return;
  auto running = std::any_of(st.shards.begin(), st.shards.end(),
                             [](auto& x) { return !x.entities.empty(); });
  auto late =
    st.s.time->now() - st.shutdown_since >= st.s.cfg.hand_off_timeout / 2;
  if (running || (!st.byes_pending.empty() && !late))
    return;
  // What waits here goes on to the shards' new owners before the leases
  // go (what waited for a stopped entity included); what has no owner to
  // go to is refused.
  for (uint32_t s = 0; s < st.shards.size(); ++s) {
    auto owner = st.owner_of.empty() ? 0 : st.owner_of[s];
    auto host = st.hosts.find(owner);
    if (owner != 0 && owner != st.s.uid && host != st.hosts.end()) {
      auto waiting = std::move(st.shards[s].buffer);
      st.shards[s].buffer.clear();
      for (auto& x : waiting)
        reroute(self, host->second, std::move(x));
    }
    refuse_buffer(self, s);
  }
  st.buffered = 0;
  if (!st.s.workers.empty())
    for (uint32_t s = 0; s < st.shards.size(); ++s)
      self->send(st.s.lease_worker, release_atom::value, s, st.owner,
                 std::string{});
  st.shutdown->deliver(true);
  st.shutdown.reset();
}

void refuse_buffer(host_actor* self, uint32_t shard) {
  auto& st = self->state;
  auto& sh = st.shards[shard];
  for (auto& x : sh.buffer) {
    if (x.content.match_element<flush_atom>(0))
      continue;
    refuse_call(
      *caf::make_mailbox_element(x.sender, x.mid, {}, x.content),
      caf::make_error(errc::entity_unavailable,
                      "node " + st.s.node_name + " stopped hosting entities"),
      self->context());
  }
  st.buffered -= std::min<uint64_t>(st.buffered, sh.buffer.size());
  sh.buffer.clear();
}

void stop_all(host_actor* self, bool graceful) {
  auto& st = self->state;
  st.stopped = true;
  st.graceful = graceful;
  st.shutdown_since = st.s.time->now();
  for (auto& [uid, h] : st.hosts)
    if (uid != st.s.uid) {
      self->send(h, bye_atom::value, st.s.uid);
      if (graceful)
        st.byes_pending.insert(uid);
    }
  if (graceful)
    self->delayed_send(self,
                       st.s.time->real_wait(st.s.cfg.hand_off_timeout / 2),
                       tick_atom::value);
  // This member owns nothing from now on: calls pass on to the others.
  st.hosting.erase(st.s.uid);
  publish_routes(self);
  for (uint32_t s = 0; s < st.shards.size(); ++s) {
    auto& sh = st.shards[s];
    for (auto& [id, e] : sh.entities) {
      if (graceful)
        stop_entity(self, e);
      else
        self->send_exit(e.actor, caf::exit_reason::kill);
    }
    sh.phase = shard_phase::idle;
    if (!graceful) {
      sh.end_hold();
      refuse_buffer(self, s);
    }
  }
  entity_gone(self, 0);
}

} // namespace ferry::detail::entities
