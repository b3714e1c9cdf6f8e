// host: calls, entities and members (see entities/host.hpp); leases and
// hand-offs are in host_shards.cpp.
#include "entities/host_state.hpp"

#include "entities/shard_map.hpp"

#include "ferry/errc.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/message_view.hpp>
#include <caf/send.hpp>

#include <algorithm>

namespace ferry::detail::entities {

namespace {

caf::error unavailable(const std::string& why) {
  return caf::make_error(errc::entity_unavailable, why);
}

/// Returns the current element as an item (its request is answered by
/// whoever takes it, not by the host).
item take_current(host_actor* self, caf::message content) {
  auto* x = self->current_mailbox_element();
  item result{x->sender, x->mid, std::move(content)};
  x->mid.mark_as_answered();
  return result;
}

/// Handles a call that reached the host (`call_atom, type, key, hops,
/// ...`).
void on_call(host_actor* self, caf::message msg) {
  auto& st = self->state;
  auto x = take_current(self, std::move(msg));
  auto refuse = [&](caf::error err) {
    ++st.figures.refused;
    if (x.mid.is_request() && x.sender)
      x.sender->enqueue(caf::make_mailbox_element(self->ctrl(),
                                                  x.mid.response_id(), {},
                                                  std::move(err)),
                        self->context());
  };
  auto& c = x.content;
  if (c.size() < call_prefix || !c.match_element<call_atom>(0) ||
      !c.match_element<std::string>(1) || !c.match_element<std::string>(2) ||
      !c.match_element<uint32_t>(3)) {
    refuse(unavailable("a call for an entity without its type and key"));
    return;
  }
  auto& type = x.content.get_as<std::string>(1);
  auto& key = x.content.get_as<std::string>(2);
  if (key.empty() || key.size() > st.s.cfg.max_key_bytes) {
    refuse(caf::make_error(
      errc::invalid_entity_key,
      "entity key of " + std::to_string(key.size()) + " bytes for type \"" +
        type + "\": keys have 1 to " + std::to_string(st.s.cfg.max_key_bytes) +
        " bytes (ferry.entities.max-key-bytes)"));
    return;
  }
  if (st.stopped && !st.graceful) {
    refuse(unavailable("node " + st.s.node_name +
                       " hosts no entities any more (it was downed)"));
    return;
  }
  admit(self, shard_of(type, key, st.s.cfg.shards), std::move(x));
}

/// Answers `x`, a flush that reached the holder's delivery, with `ready`.
void answer_flush(host_actor* self, uint32_t shard, const item& x) {
  auto& st = self->state;
  auto origin = x.content.get_as<uint64_t>(2);
  auto token = x.content.get_as<uint64_t>(3);
  if (origin == st.s.uid) {
    st.s.routes->ready(shard, token, self->context());
    return;
  }
  // The flush comes from the origin's host (its sender): a member that has
  // not met that host yet (it joined a moment ago) answers all the same.
  if (auto to = caf::actor_cast<caf::actor>(x.sender))
    self->send(to, ready_atom::value, shard, token);
}

/// Sends `x` on to `host`, counting a hop (or, `fresh`, starting anew).
void pass_to(host_actor* self, const caf::actor& host, item x,
             bool fresh = false) {
  auto content = std::move(x.content);
  if (content.match_element<call_atom>(0)) {
    auto hops = fresh ? uint32_t{0} : content.get_as<uint32_t>(3) + 1;
    content = caf::message::concat(
      caf::make_message(call_atom::value, content.get_as<std::string>(1),
                        content.get_as<std::string>(2), hops),
      content.drop(call_prefix));
  }
  host->enqueue(caf::make_mailbox_element(std::move(x.sender), x.mid, {},
                                          std::move(content)),
                self->context());
}

caf::behavior host(host_actor* self, host_settings s);

} // namespace

void reroute(host_actor* self, const caf::actor& host, item x) {
  pass_to(self, host, std::move(x), true);
}

void log_limited(host_actor* self, const std::string& line) {
  auto& st = self->state;
  if (auto out = st.logged->pass(line))
    st.s.log(*out);
}

const caf::actor& worker(host_actor* self) {
  auto& st = self->state;
  return st.s.workers[st.next_worker++ % st.s.workers.size()];
}

void publish_routes(host_actor* self) {
  auto& st = self->state;
  // The owners: members that are up and host entities (without a cluster,
  // this node alone).
  st.owners.clear();
  if (!st.s.cluster->joined()) {
    if (st.hosting.count(st.s.uid) > 0)
      st.owners.push_back(st.s.uid);
  } else {
    for (auto& [uid, m] : st.members)
      if (m.status == member_status::up && st.hosting.count(uid) > 0)
        st.owners.push_back(uid);
  }
  std::sort(st.owners.begin(), st.owners.end());
  st.owner_of.assign(st.s.cfg.shards, 0);
  for (uint32_t shard = 0; shard < st.s.cfg.shards; ++shard)
    if (auto x = owner_of(shard, st.owners))
      st.owner_of[shard] = *x;
  auto r = std::make_shared<routes>();
  r->self = st.s.uid;
  r->self_host = st.self_handle;
  r->owner = st.owner_of;
  r->hosts = st.hosts;
  st.s.routes->set_routes(std::move(r));
}

void admit(host_actor* self, uint32_t shard, item x) {
  auto& st = self->state;
  auto& sh = st.shards[shard];
  if (sh.phase == shard_phase::active && sh.lease_passed())
    drop(self, shard, "its lease could not be renewed in time");
  switch (sh.phase) {
  case shard_phase::active:
    deliver(self, shard, std::move(x));
    return;
  case shard_phase::acquiring:
  case shard_phase::awaiting_handoff:
  case shard_phase::handing_off:
    hold(self, shard, std::move(x));
    return;
  case shard_phase::idle:
    break;
  }
  auto owner = st.owner_of.empty() ? 0 : st.owner_of[shard];
  if (owner == st.s.uid && sh.failure && st.s.time->now() < sh.retry_at) {
    // The database did not answer a moment ago: say so now, rather than
    // hold the call for it.
    ++st.figures.refused;
    refuse_call(
      *caf::make_mailbox_element(x.sender, x.mid, {}, x.content),
      caf::make_error(errc::state_store_failed,
                      "node " + st.s.node_name + " cannot take shard " +
                        std::to_string(shard) + ": " + render(sh.failure)),
      self->context());
    return;
  }
  if (owner == 0 || owner == st.s.uid || sh.incoming || !sh.buffer.empty()) {
    // Ours (soon), nobody's yet, or behind others that wait: it waits too.
    hold(self, shard, std::move(x));
    return;
  }
  auto i = st.hosts.find(owner);
  if (i == st.hosts.end()) {
    hold(self, shard, std::move(x));
    return;
  }
  if (x.content.match_element<call_atom>(0) &&
      x.content.get_as<uint32_t>(3) >= max_hops) {
    // It went around members whose views disagree: it waits here until
    // they agree (rebalance sends it on afresh).
    hold(self, shard, std::move(x));
    return;
  }
  pass_to(self, i->second, std::move(x));
}

void hold(host_actor* self, uint32_t shard, item x) {
  auto& st = self->state;
  auto& sh = st.shards[shard];
  if (sh.buffer.size() >= st.s.cfg.max_buffered) {
    ++st.figures.refused;
    refuse_call(*caf::make_mailbox_element(x.sender, x.mid, {}, x.content),
                unavailable("shard " + std::to_string(shard) +
                            " is not active on node " + st.s.node_name +
                            " (it moves, or its lease is being taken) and " +
                            std::to_string(st.s.cfg.max_buffered) +
                            " messages wait for it already "
                            "(ferry.entities.max-buffered)"),
                self->context());
    return;
  }
  sh.buffer.push_back(std::move(x));
  ++st.buffered;
}

void deliver(host_actor* self, uint32_t shard, item x) {
  auto& st = self->state;
  auto& sh = st.shards[shard];
  if (x.content.match_element<flush_atom>(0)) {
    answer_flush(self, shard, x);
    return;
  }
  auto& type = x.content.get_as<std::string>(1);
  auto& key = x.content.get_as<std::string>(2);
  auto t = st.s.types.find(type);
  if (t == st.s.types.end()) {
    ++st.figures.refused;
    std::string known;
    for (auto& [name, _] : st.s.types)
      known += (known.empty() ? "" : ", ") + name;
    refuse_call(*caf::make_mailbox_element(x.sender, x.mid, {}, x.content),
                caf::make_error(
                  errc::unknown_entity_type,
                  "node " + st.s.node_name + " has no entity type \"" + type +
                    "\" (it registers: " + (known.empty() ? "none" : known) +
                    "); register it with "
                    "node_config::add_entity_type on every "
                    "member"),
                self->context());
    return;
  }
  auto [i, fresh] = sh.entities.try_emplace(entity_id(type, key));
  auto& e = i->second;
  if (e.stopping) {
    e.waiting.push_back(std::move(x));
    return;
  }
  if (fresh) {
    entity_setup setup;
    setup.type = type;
    setup.key = key;
    setup.family = t->second->family;
    setup.registry = st.s.registry;
    setup.store = worker(self);
    setup.host = st.self_handle;
    setup.fence = sh.fence;
    e.actor = t->second->spawn(self->home_system(), std::move(setup));
    e.type = &t->first;
    e.key = key;
    self->monitor(e.actor);
    ++st.figures.active[type];
    ++st.figures.activations;
  }
  e.last = st.s.time->now();
  e.actor->enqueue(caf::make_mailbox_element(std::move(x.sender), x.mid, {},
                                             x.content.drop(call_prefix)),
                   self->context());
}

void stop_entity(host_actor* self, running_entity& e) {
  if (e.stopping)
    return;
  e.stopping = true;
  self->send(e.actor, stop_atom::value);
}

namespace {

/// Returns whether member `uid` maps keys to as many shards as this node;
/// logs the mismatch otherwise (the two do not meet: a shard number means
/// another shard on each).
bool same_shards(host_actor* self, uint64_t uid, uint32_t shards) {
  auto& st = self->state;
  if (shards == st.s.cfg.shards)
    return true;
  auto m = st.members.find(uid);
  log_limited(self,
              "error: member " +
                (m != st.members.end() ? m->second.name : std::to_string(uid)) +
                " maps entity keys to " + std::to_string(shards) +
                " shards and this node to " + std::to_string(st.s.cfg.shards) +
                ": this node sends it no calls; set "
                "ferry.entities.shards alike on every node that hosts "
                "or reaches entities");
  return false;
}

/// Records `h` as the host of member `uid`, watched: when its link goes
/// down, calls for the member's shards wait here instead of following it.
void met(host_actor* self, uint64_t uid, const caf::actor& h) {
  auto& st = self->state;
  auto& known = st.hosts[uid];
  if (known == h)
    return;
  known = h;
  if (uid != st.s.uid)
    self->monitor(h);
}

/// The host `x` names ended or its link went down: no call goes its way
/// until it introduces itself again (its member stays an owner until the
/// cluster says it is down, so its shards wait here meanwhile).
bool on_host_down(host_actor* self, const caf::down_msg& x) {
  auto& st = self->state;
  auto i = std::find_if(st.hosts.begin(), st.hosts.end(), [&](auto& kv) {
    return kv.first != st.s.uid && kv.second.address() == x.source;
  });
  if (i == st.hosts.end())
    return false;
  auto way = i->second;
  auto m = st.members.find(i->first);
  log_limited(self, "the entity host of member " +
                      (m != st.members.end() ? m->second.name
                                             : std::to_string(i->first)) +
                      " is out of reach (" + render(x.reason) +
                      "): its shards' calls wait here");
  st.hosts.erase(i);
  publish_routes(self);
  st.s.routes->gone(way, self->context());
  return true;
}

/// An entity ended: forget it, and start its next activation when calls
/// wait for one.
void on_entity_down(host_actor* self, const caf::down_msg& x) {
  auto& st = self->state;
  if (on_host_down(self, x))
    return;
  for (uint32_t shard = 0; shard < st.shards.size(); ++shard) {
    auto& sh = st.shards[shard];
    for (auto i = sh.entities.begin(); i != sh.entities.end(); ++i) {
      if (i->second.actor.address() != x.source)
        continue;
      auto waiting = std::move(i->second.waiting);
      if (auto n = st.figures.active.find(*i->second.type);
          n != st.figures.active.end() && n->second > 0)
        --n->second;
      if (i->second.stopping)
        ++st.figures.passivations;
      if (x.reason && x.reason != caf::exit_reason::kill &&
          x.reason != caf::exit_reason::user_shutdown)
        log_limited(self, "entity (\"" + *i->second.type + "\", \"" +
                            i->second.key + "\") ended: " + render(x.reason));
      sh.entities.erase(i);
      if (sh.phase == shard_phase::active) {
        for (auto& w : waiting)
          deliver(self, shard, std::move(w));
      } else {
        // The shard moves: what waited goes with its buffer, first.
        for (auto w = waiting.rbegin(); w != waiting.rend(); ++w) {
          sh.buffer.push_front(std::move(*w));
          ++st.buffered;
        }
      }
      entity_gone(self, shard);
      return;
    }
  }
}

/// The cluster's view changed: recompute the owners, meet new hosts.
void on_members(host_actor* self) {
  auto& st = self->state;
  st.members.clear();
  auto self_down = false;
  for (auto& m : st.s.cluster->members()) {
    st.members[m.uid] = m;
    if (m.uid == st.s.uid &&
        (m.status == member_status::down || m.status == member_status::removed))
      self_down = true;
  }
  // Hosts of members that are gone stop being ways to a shard.
  std::vector<caf::actor> gone;
  for (auto i = st.hosts.begin(); i != st.hosts.end();) {
    auto m = st.members.find(i->first);
    // (A host can be met before its member is in this view: only a member
    // seen down or removed loses its host.)
    if (i->first != st.s.uid && m != st.members.end() &&
        (m->second.status == member_status::down ||
         m->second.status == member_status::removed)) {
      st.hosting.erase(i->first);
      gone.push_back(i->second);
      i = st.hosts.erase(i);
    } else {
      ++i;
    }
  }
  publish_routes(self);
  for (auto& way : gone)
    st.s.routes->gone(way, self->context());
  if (self_down && !st.stopped) {
    st.s.log("this member was downed: its entities stop");
    stop_all(self, false);
    return;
  }
  rebalance(self);
}

/// Asks the hosts in `listing` this host has not met to introduce
/// themselves.
void meet(host_actor* self, const registry_listing& listing) {
  auto& st = self->state;
  for (auto& h : listing.actors) {
    if (h == st.self_handle)
      continue;
    auto known = std::any_of(st.hosts.begin(), st.hosts.end(),
                             [&](auto& kv) { return kv.second == h; });
    auto asked = std::find(st.introducing.begin(), st.introducing.end(), h) !=
                 st.introducing.end();
    if (known || asked)
      continue;
    st.introducing.push_back(h);
    self
      ->request(h, std::chrono::seconds{30}, hello_atom::value, st.s.uid,
                !st.s.observer, st.s.cfg.shards)
      .then(
        [self, h](hello_atom, uint64_t uid, bool hosting, uint32_t shards) {
          auto& st = self->state;
          std::erase(st.introducing, h);
          if (!same_shards(self, uid, shards))
            return;
          met(self, uid, h);
          if (hosting)
            st.hosting.insert(uid);
          publish_routes(self);
          rebalance(self);
        },
        [self, h](caf::error&) { std::erase(self->state.introducing, h); });
  }
}

void tick(host_actor* self) {
  auto& st = self->state;
  auto now = st.s.time->now();
  // Idle entities stop.
  for (auto& sh : st.shards)
    if (sh.phase == shard_phase::active)
      for (auto& [key, e] : sh.entities)
        if (!e.stopping && now - e.last >= st.s.cfg.passivate_after)
          stop_entity(self, e);
  keep_leases(self);
  rebalance(self);
  st.s.routes->expire(self->context());
  auto period = std::min<clock::duration>({std::chrono::milliseconds{500},
                                           st.s.cfg.lease / 6,
                                           st.s.cfg.passivate_after / 2});
  self->delayed_send(self, st.s.time->real_wait(period), tick_atom::value);
}

caf::behavior host(host_actor* self, host_settings s) {
  auto& st = self->state;
  st.s = std::move(s);
  st.owner = lease_owner(st.s.node_name, st.s.uid);
  st.logged =
    std::make_unique<log_limiter>(std::chrono::seconds{1}, *st.s.time);
  st.self_handle = caf::actor_cast<caf::actor>(self);
  st.shards.resize(st.s.cfg.shards);
  st.hosts[st.s.uid] = st.self_handle;
  if (!st.s.observer)
    st.hosting.insert(st.s.uid);
  if (st.s.cluster->joined()) {
    st.s.cluster->watch_members(st.self_handle);
    // Only hosting members are found: an observer introduces itself to
    // them (and they to it) when it meets them.
    if (!st.s.observer)
      static_cast<void>(
        st.s.cluster->register_actor(registry_key, st.self_handle));
    st.s.cluster->subscribe_actors(registry_key, st.self_handle);
  }
  if (st.s.cluster->joined())
    on_members(self);
  else
    publish_routes(self);
  self->set_down_handler([self](caf::down_msg& x) { on_entity_down(self, x); });
  self->set_default_handler(
    [](caf::scheduled_actor* ptr,
       caf::message_view& x) -> caf::result<caf::message> {
      auto* me = static_cast<host_actor*>(ptr);
      on_call(me, x.move_content_to_message());
      return caf::message{};
    });
  self->send(self, tick_atom::value);
  return {
    [self](flush_atom, uint32_t shard, uint64_t origin, uint64_t token) {
      if (shard >= self->state.shards.size())
        return;
      admit(self, shard,
            take_current(self, caf::make_message(flush_atom::value, shard,
                                                 origin, token)));
    },
    [self](ready_atom, uint32_t shard, uint64_t token) {
      self->state.s.routes->ready(shard, token, self->context());
    },
    [self](handoff_atom, uint32_t shard, uint64_t) {
      if (shard < self->state.shards.size())
        on_handoff_begin(self, shard);
    },
    [self](handed_atom, uint32_t shard, uint64_t epoch) {
      if (shard < self->state.shards.size())
        on_handoff(self, shard, epoch);
    },
    [self](hello_atom, uint64_t uid, bool hosting, uint32_t shards) {
      auto& st = self->state;
      auto h = caf::actor_cast<caf::actor>(self->current_sender());
      if (h && same_shards(self, uid, shards)) {
        met(self, uid, h);
        if (hosting)
          st.hosting.insert(uid);
        publish_routes(self);
        rebalance(self);
      }
      return caf::make_message(hello_atom::value, st.s.uid, !st.s.observer,
                               st.s.cfg.shards);
    },
    [self](bye_atom, uint64_t uid) {
      auto& st = self->state;
      if (auto i = st.hosts.find(uid); i != st.hosts.end()) {
        auto way = i->second;
        st.hosts.erase(i);
        st.hosting.erase(uid);
        publish_routes(self);
        st.s.routes->gone(way, self->context());
      }
      // No call goes that way any more: the answer follows the last ones.
      st.s.routes->barrier();
      if (auto h = caf::actor_cast<caf::actor>(self->current_sender()))
        self->send(h, bye_ack_atom::value, st.s.uid);
      rebalance(self);
    },
    [self](bye_ack_atom, uint64_t uid) {
      self->state.byes_pending.erase(uid);
      finish_shutdown(self);
    },
    [self](idle_atom, const std::string& type, const std::string& key) {
      auto& st = self->state;
      auto& sh = st.shards[shard_of(type, key, st.s.cfg.shards)];
      if (auto i = sh.entities.find(entity_id(type, key));
          i != sh.entities.end())
        stop_entity(self, i->second);
    },
    [self](const member_up&) { on_members(self); },
    [self](const member_down&) { on_members(self); },
    [self](const member_removed&) { on_members(self); },
    [](const member_unreachable&) {},
    [](const member_reachable&) {},
    [self](const members_converged&) { on_members(self); },
    [self](const registry_listing& x) { meet(self, x); },
    [self](tick_atom) {
      if (!self->state.stopped)
        tick(self);
      else
        finish_shutdown(self);
    },
    [self](stats_atom) {
      auto& st = self->state;
      auto x = st.figures;
      x.buffered = st.buffered + st.s.routes->held();
      x.shards_held = 0;
      for (auto& sh : st.shards)
        if (sh.phase == shard_phase::active ||
            sh.phase == shard_phase::handing_off ||
            sh.phase == shard_phase::awaiting_handoff)
          ++x.shards_held;
      return x;
    },
    [self](shutdown_atom) -> caf::result<bool> {
      auto& st = self->state;
      if (st.stopped)
        return true;
      st.shutdown = self->make_response_promise();
      stop_all(self, true);
      return caf::delegated<bool>{};
    },
  };
}

} // namespace

caf::actor spawn_host(caf::actor_system& sys, host_settings s) {
  return sys.spawn(host, std::move(s));
}

} // namespace ferry::detail::entities
