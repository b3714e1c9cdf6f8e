// dashboard_json (see metrics/dashboard_json.hpp).

#include "metrics/dashboard_json.hpp"

#include "ferry/errc.hpp"

#include <algorithm>
#include <set>

namespace ferry::detail {

namespace {

void write_uid(json_writer& out, std::string_view key, uint64_t uid) {
  out.field(key, std::to_string(uid));
}

void write_sample(json_writer& out, const rate_sample& s) {
  out.begin_object().field("t", s.unix_ms);
  out.key("families").begin_object();
  for (auto& [family, r] : s.families) {
    out.key(family).begin_object();
    out.field("sent", r.sent).field("received", r.received);
    out.key("encode_us");
    r.encode_seconds ? out.value(*r.encode_seconds * 1e6) : out.null();
    out.key("decode_us");
    r.decode_seconds ? out.value(*r.decode_seconds * 1e6) : out.null();
    out.end_object();
  }
  out.end_object();
  out.key("store");
  if (s.store) {
    out.begin_object()
      .field("capacity", s.store->capacity)
      .field("used", s.store->used)
      .field("pinned", s.store->pinned)
      .field("spilled", s.store->spilled)
      .field("objects", s.store->objects)
      .end_object();
  } else {
    out.null();
  }
  out.end_object();
}

} // namespace

void write_node(json_writer& out, const node_figures& x, const node_facts& f) {
  out.begin_object()
    .field("name", x.node_name)
    .field("uptime_seconds", f.uptime_seconds)
    .field("resident_bytes", x.resident_bytes)
    .field("actions", f.actions)
    .field("now_ms", f.now_ms);
  out.key("cluster");
  x.cluster ? out.value(x.cluster->name) : out.null();
  out.end_object();
}

void write_members(json_writer& out, const node_figures& x) {
  out.begin_object();
  if (!x.cluster) {
    out.key("cluster").null();
    out.key("members").begin_array().end_array();
    out.end_object();
    return;
  }
  auto& c = *x.cluster;
  out.field("cluster", c.name);
  write_uid(out, "self", c.self);
  out.key("leader");
  c.leader ? out.value(std::to_string(*c.leader)) : out.null();
  out.field("converged", c.converged)
    .field("convergence_seconds", c.convergence_seconds);
  out.key("members").begin_array();
  for (auto& m : c.members) {
    out.begin_object().field("address", m.address).field("name", m.name);
    write_uid(out, "uid", m.uid);
    out.field("status", to_string(m.status))
      .field("reachable", m.reachable)
      .field("up_number", m.up_number)
      .field("leader", c.leader && *c.leader == m.uid)
      .field("self", m.uid == c.self);
    out.key("phi");
    if (auto i = c.phi.find(m.uid); i != c.phi.end())
      out.value(i->second);
    else
      out.null();
    out.end_object();
  }
  out.end_array().end_object();
}

void write_links(json_writer& out, const node_figures& x,
                 const rate_history& h) {
  out.begin_object().key("links").begin_array();
  std::set<std::string> up;
  for (auto& l : x.links) {
    up.insert(l.peer);
    out.begin_object()
      .field("peer", l.peer)
      .field("up", true)
      .field("kind", l.lane  ? "lane"
                     : l.tls ? "tls"
                             : "plain")
      .field("tls", l.tls)
      .field("same_host", l.same_host);
    out.key("families").begin_array();
    for (auto& f : l.send_families)
      out.value(f);
    out.end_array();
    out.key("families_in_use").begin_object();
    out.key("sent").begin_array();
    for (auto& [f, n] : l.sent_by_family)
      if (n > 0)
        out.value(f);
    out.end_array().key("received").begin_array();
    for (auto& [f, n] : l.received_by_family)
      if (n > 0)
        out.value(f);
    out.end_array().end_object();
    out.field("messages_sent", l.messages_sent)
      .field("messages_received", l.messages_received)
      .field("bytes_sent", l.bytes_inline_sent + l.bytes_spilled_sent +
                             l.bytes_pulled_by_peer)
      .field("bytes_received", l.bytes_inline_received +
                                 l.bytes_spilled_received + l.bytes_pulled);
    auto r = h.links().find(l.peer);
    auto rates = r == h.links().end() ? link_rates{} : r->second;
    out.key("per_second")
      .begin_object()
      .field("messages_sent", rates.messages_sent)
      .field("messages_received", rates.messages_received)
      .field("bytes_sent", rates.bytes_sent)
      .field("bytes_received", rates.bytes_received)
      .end_object();
    out.field("credit_waits", l.credit_waits)
      .field("credit_wait_seconds", l.credit_wait_seconds)
      .field("refusals", l.refusals)
      .field("refused_by_peer", l.refused_by_peer)
      .field("send_errors", l.send_errors)
      .field("pending_requests", l.pending_requests)
      .field("held_bytes", l.held_bytes);
    out.key("last_error").null();
    out.end_object();
  }
  // Peers this node had a link to that is down now, with the reason.
  for (auto& p : x.peers) {
    if (p.up || up.count(p.node) > 0)
      continue;
    out.begin_object()
      .field("peer", p.node)
      .field("up", false)
      .field("kind", "down");
    out.key("last_error");
    p.reason ? out.value(render(p.reason)) : out.null();
    out.end_object();
  }
  out.end_array().end_object();
}

void write_store(json_writer& out, const node_figures& x) {
  out.begin_object().key("store");
  if (!x.store) {
    out.null().end_object();
    return;
  }
  auto& s = *x.store;
  out.begin_object()
    .field("name", s.name)
    .field("capacity", s.capacity)
    .field("used", s.bytes_used)
    .field("pinned", s.bytes_pinned)
    .field("spilled", s.bytes_spilled)
    .field("spill_limit", s.spill_limit)
    .field("largest_free_block", s.largest_free_block)
    .field("objects", s.objects)
    .field("processes", s.processes)
    .field("recoveries", s.recoveries)
    .end_object();
  out.end_object();
}

void write_entities(json_writer& out, const node_figures& x) {
  out.begin_object().key("entities");
  if (!x.entities) {
    out.null().end_object();
    return;
  }
  auto& e = *x.entities;
  out.begin_object().key("active").begin_object();
  for (auto& [type, n] : e.active)
    out.field(type, n);
  out.end_object()
    .field("shards", e.shards_held)
    .field("buffered", e.buffered)
    .field("activations", e.activations)
    .field("passivations", e.passivations)
    .field("hand_offs", e.hand_offs)
    .field("refused", e.refused)
    .field("saves", e.saves)
    .field("conflicts", e.conflicts)
    .field("store_calls", e.store_calls)
    .field("store_failures", e.store_failures)
    .field("store_seconds", e.store_seconds)
    .end_object();
  out.end_object();
}

void write_rates(json_writer& out, const rate_history& h, bool all) {
  out.begin_object().key("samples").begin_array();
  auto& xs = h.samples();
  if (all) {
    for (auto& s : xs)
      write_sample(out, s);
  } else if (!xs.empty()) {
    write_sample(out, xs.back());
  }
  out.end_array().end_object();
}

void write_snapshot(json_writer& out, const node_figures& x,
                    const node_facts& f, const rate_history& h) {
  out.begin_object();
  out.key("node");
  write_node(out, x, f);
  out.key("members");
  write_members(out, x);
  out.key("links");
  write_links(out, x, h);
  out.key("store");
  write_store(out, x);
  out.key("entities");
  write_entities(out, x);
  out.key("rates");
  write_rates(out, h, false);
  out.end_object();
}

} // namespace ferry::detail
