// exposition: Prometheus' text format, written once per scrape (see
// metrics/exposition.hpp).
//
// Each metric family is written as a block: `# HELP`, `# TYPE`, then its
// samples, so a family never appears twice. Label values are escaped as
// the format requires (backslash, double quote, newline). Refusal reasons
// and link states a node has not seen yet are written as zero, so a query
// or an alert finds its series before the first event.
#include "metrics/exposition.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <map>
#include <string_view>
#include <type_traits>
#include <utility>

#include <unistd.h>

namespace ferry::detail {

namespace {

using label = std::pair<std::string_view, std::string_view>;

/// The refusal reasons written even at zero.
constexpr std::array<std::string_view, 12> known_reasons{
  "decode_failed",   "family_refused", "link_down",        "message_too_large",
  "no_such_actor",   "receiver_full",  "too_many_actors",  "too_many_proxies",
  "transfer_failed", "type_mismatch",  "unasked_response", "unregistered_type"};

std::string format_number(double x) {
  if (std::isinf(x))
    return x > 0 ? "+Inf" : "-Inf";
  if (std::isnan(x))
    return "NaN";
  std::array<char, 64> buf{};
  auto res = std::to_chars(buf.data(), buf.data() + buf.size(), x);
  return std::string{buf.data(), res.ptr};
}

/// Writes metric families into one text.
class writer {
public:
  /// Starts the family `name` of `type` with `help`.
  void family(std::string_view name, std::string_view type,
              std::string_view help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }

  void sample(std::string_view name, std::initializer_list<label> labels,
              uint64_t value) {
    head(name, labels, {});
    out_ += std::to_string(value);
    out_ += '\n';
  }

  void sample(std::string_view name, std::initializer_list<label> labels,
              double value, label extra = {}) {
    head(name, labels, extra);
    out_ += format_number(value);
    out_ += '\n';
  }

  /// Writes the samples of one histogram (`_bucket`, `_sum`, `_count`).
  void histogram(std::string_view name, std::initializer_list<label> labels,
                 const histogram_stats& h) {
    auto bucket = std::string{name} + "_bucket";
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.counts.size(); ++i) {
      cumulative += h.counts[i];
      auto le =
        i < h.bounds.size() ? format_number(h.bounds[i]) : std::string{"+Inf"};
      head(bucket, labels, {"le", le});
      out_ += std::to_string(cumulative);
      out_ += '\n';
    }
    sample(std::string{name} + "_sum", labels, h.sum);
    sample(std::string{name} + "_count", labels, h.count);
  }

  std::string take() { return std::move(out_); }

private:
  void head(std::string_view name, std::initializer_list<label> labels,
            label extra) {
    out_ += name;
    auto first = true;
    auto add = [&](const label& x) {
      out_ += first ? '{' : ',';
      first = false;
      out_ += x.first;
      out_ += "=\"";
      for (auto c : x.second) {
        if (c == '\\' || c == '"')
          out_ += '\\';
        if (c == '\n')
          out_ += "\\n";
        else
          out_ += c;
      }
      out_ += '"';
    };
    for (auto& x : labels)
      add(x);
    if (!extra.first.empty())
      add(extra);
    if (!first)
      out_ += '}';
    out_ += ' ';
  }

  std::string out_;
};

/// Writes one family with one sample per link, of `value(link)`.
void per_link(writer& w, const node_figures& x, std::string_view name,
              std::string_view type, std::string_view help,
              const std::function<uint64_t(const link_stats&)>& value) {
  w.family(name, type, help);
  for (auto& link : x.links)
    w.sample(name, {{"peer", link.peer}}, value(link));
}

/// Writes one family with a sent and a received sample per link.
void per_direction(writer& w, const node_figures& x, std::string_view name,
                   std::string_view help, uint64_t link_stats::*sent,
                   uint64_t link_stats::*received) {
  w.family(name, "counter", help);
  for (auto& link : x.links) {
    w.sample(name, {{"peer", link.peer}, {"direction", "sent"}}, link.*sent);
    w.sample(name, {{"peer", link.peer}, {"direction", "received"}},
             link.*received);
  }
}

/// Writes one family with a sample (or histogram) per link and family,
/// from the map `by_family` of each link.
template <class T>
void per_family(writer& w, const node_figures& x, std::string_view name,
                std::string_view type, std::string_view help,
                std::map<std::string, T> link_stats::*by_family) {
  w.family(name, type, help);
  for (auto& link : x.links)
    for (auto& [family, value] : link.*by_family) {
      if constexpr (std::is_same_v<T, histogram_stats>)
        w.histogram(name, {{"peer", link.peer}, {"family", family}}, value);
      else
        w.sample(name, {{"peer", link.peer}, {"family", family}}, value);
    }
}

void write_links(writer& w, const node_figures& x) {
  per_family(w, x, "ferry_link_messages_sent_total", "counter",
             "Messages this node sent on a link, by family of their elements.",
             &link_stats::sent_by_family);
  per_family(w, x, "ferry_link_messages_received_total", "counter",
             "Message elements this node received and decoded on a link, by "
             "family.",
             &link_stats::received_by_family);
  per_link(
    w, x, "ferry_link_bytes_sent_total", "counter",
    "Frame bytes this node sent inline (inside message frames) on a link.",
    [](auto& l) { return l.bytes_inline_sent; });
  per_link(w, x, "ferry_link_bytes_received_total", "counter",
           "Frame bytes this node received inline on a link.",
           [](auto& l) { return l.bytes_inline_received; });
  per_direction(w, x, "ferry_link_spilled_bytes_total",
                "Frame bytes that went through the host store (same host).",
                &link_stats::bytes_spilled_sent,
                &link_stats::bytes_spilled_received);
  per_direction(w, x, "ferry_link_pulled_bytes_total",
                "Frame bytes pulled in chunks across hosts: sent (the peer "
                "pulled them from this node) or received.",
                &link_stats::bytes_pulled_by_peer, &link_stats::bytes_pulled);
  per_direction(w, x, "ferry_link_relayed_bytes_total",
                "Bytes of other nodes' store objects relayed on a link: sent "
                "(the peer pulled them from this node's copy) or received "
                "(this node pulled them from the peer's copy).",
                &link_stats::bytes_relayed_to_peer,
                &link_stats::bytes_relayed_by_peer);
  per_family(w, x, "ferry_encode_seconds", "histogram",
             "Time to encode one element of a sent message, by family.",
             &link_stats::encode_seconds);
  per_family(w, x, "ferry_decode_seconds", "histogram",
             "Time to decode one element of a received message, by family.",
             &link_stats::decode_seconds);
  w.family("ferry_link_batch_messages", "histogram",
           "Messages per frame sent on a link (1: sent alone).");
  for (auto& link : x.links)
    w.histogram("ferry_link_batch_messages", {{"peer", link.peer}},
                link.batch_messages);
  per_link(w, x, "ferry_link_credit_waits_total", "counter",
           "Times a sender waited for credit (the link's window was full).",
           [](auto& l) { return l.credit_waits; });
  w.family("ferry_link_credit_wait_seconds_total", "counter",
           "Seconds senders spent waiting for credit.");
  for (auto& link : x.links)
    w.sample("ferry_link_credit_wait_seconds_total", {{"peer", link.peer}},
             link.credit_wait_seconds);
  w.family("ferry_link_refusals_total", "counter",
           "Incoming messages this node refused, by reason.");
  for (auto& link : x.links) {
    auto seen = link.refusals_by_reason;
    for (auto reason : known_reasons)
      seen.try_emplace(std::string{reason}, 0);
    seen.try_emplace("other", 0);
    for (auto& [reason, n] : seen)
      w.sample("ferry_link_refusals_total",
               {{"peer", link.peer}, {"reason", reason}}, n);
  }
  per_link(w, x, "ferry_link_refused_by_peer_total", "counter",
           "Messages of this node's the peer refused.",
           [](auto& l) { return l.refused_by_peer; });
  per_link(w, x, "ferry_link_send_errors_total", "counter",
           "Messages that failed before sending (no family, too large, no "
           "credit in time).",
           [](auto& l) { return l.send_errors; });
  per_link(w, x, "ferry_link_held_bytes", "gauge",
           "Bytes of the peer's messages this node's actors have not "
           "processed yet.",
           [](auto& l) { return l.held_bytes; });
  per_link(w, x, "ferry_link_pending_requests", "gauge",
           "Requests sent on a link still waiting for their response.",
           [](auto& l) { return l.pending_requests; });
  uint64_t up = 0;
  for (auto& peer : x.peers)
    up += peer.up ? 1 : 0;
  w.family("ferry_links", "gauge",
           "Peers this node has had a link to, by the state of the link.");
  w.sample("ferry_links", {{"state", "up"}}, up);
  w.sample("ferry_links", {{"state", "down"}}, x.peers.size() - up);
}

void write_store(writer& w, const store::store_totals& s) {
  auto one = [&](std::string_view name, std::string_view help, uint64_t v) {
    w.family(name, "gauge", help);
    w.sample(name, {{"store", s.name}}, v);
  };
  one("ferry_store_capacity_bytes", "Bytes the host store holds at most.",
      s.capacity);
  one("ferry_store_used_bytes",
      "Bytes of store memory taken by resident objects (with block headers).",
      s.bytes_used);
  one("ferry_store_objects", "Objects in the host store.", s.objects);
  one("ferry_store_spilled_bytes", "Bytes of store objects in spill files.",
      s.bytes_spilled);
  one("ferry_store_processes", "Live processes attached to the host store.",
      s.processes_alive);
}

void write_cluster(writer& w, const cluster_figures& c) {
  constexpr std::array states{member_status::joining, member_status::up,
                              member_status::leaving, member_status::exiting,
                              member_status::down};
  w.family("ferry_cluster_members", "gauge",
           "Members of the node's cluster as the node sees them, by state.");
  for (auto state : states) {
    uint64_t n = 0;
    for (auto& m : c.members)
      n += m.status == state ? 1 : 0;
    w.sample("ferry_cluster_members", {{"state", to_string(state)}}, n);
  }
  uint64_t unreachable = 0;
  for (auto& m : c.members)
    unreachable += m.reachable ? 0 : 1;
  w.family("ferry_cluster_unreachable", "gauge",
           "Members some watcher cannot reach.");
  w.sample("ferry_cluster_unreachable", {}, unreachable);
  w.family("ferry_cluster_convergence_seconds", "gauge",
           "How long the last version of the view this node saw took, from "
           "when the node saw it, to reach every reachable member.");
  w.sample("ferry_cluster_convergence_seconds", {}, c.convergence_seconds);
  w.family("ferry_cluster_member", "gauge",
           "One sample per member (value 1): its address, name, state and "
           "reachability in the labels.");
  for (auto& m : c.members)
    w.sample("ferry_cluster_member",
             {{"address", m.address},
              {"member", m.name},
              {"state", to_string(m.status)},
              {"reachable", m.reachable ? "true" : "false"}},
             uint64_t{1});
  w.family("ferry_cluster_phi", "gauge",
           "phi of each member this node watches (unreachable at the "
           "threshold, 8 by default).");
  for (auto& m : c.members)
    if (auto i = c.phi.find(m.uid); i != c.phi.end())
      w.sample("ferry_cluster_phi", {{"address", m.address}}, i->second);
}

void write_entities(writer& w, const entity_stats& e) {
  w.family("ferry_entities_active", "gauge",
           "Entities active on this node, by type.");
  for (auto& [type, n] : e.active)
    w.sample("ferry_entities_active", {{"type", type}}, n);
  auto gauge = [&](std::string_view name, std::string_view help, uint64_t v) {
    w.family(name, "gauge", help);
    w.sample(name, {}, v);
  };
  auto counter = [&](std::string_view name, std::string_view help, uint64_t v) {
    w.family(name, "counter", help);
    w.sample(name, {}, v);
  };
  gauge("ferry_entities_shards", "Shards this node holds.", e.shards_held);
  gauge("ferry_entities_buffered",
        "Messages waiting for a shard that is not active yet.", e.buffered);
  counter("ferry_entities_activations_total", "Entity activations started.",
          e.activations);
  counter("ferry_entities_passivations_total", "Entity activations ended.",
          e.passivations);
  counter("ferry_entities_hand_offs_total",
          "Shards this node handed to another member.", e.hand_offs);
  counter("ferry_entities_refused_total",
          "Messages to entities refused (unknown type, full buffer, "
          "database away).",
          e.refused);
  counter("ferry_entities_saves_total", "Entity states saved.", e.saves);
  counter("ferry_entities_conflicts_total",
          "Saves refused because another activation saved first "
          "(state_conflict).",
          e.conflicts);
  counter("ferry_entities_store_failures_total",
          "Database calls that failed for another reason.", e.store_failures);
  w.family("ferry_entities_store_seconds", "summary",
           "Database calls (loads, saves, leases) and the time they took.");
  w.sample("ferry_entities_store_seconds_sum", {}, e.store_seconds);
  w.sample("ferry_entities_store_seconds_count", {}, e.store_calls);
}

} // namespace

std::string render_exposition(const node_figures& x) {
  writer w;
  w.family("ferry_node_info", "gauge", "The node's name, in its label.");
  w.sample("ferry_node_info", {{"node", x.node_name}}, uint64_t{1});
  write_links(w, x);
  if (x.store)
    write_store(w, *x.store);
  if (x.cluster)
    write_cluster(w, *x.cluster);
  if (x.entities)
    write_entities(w, *x.entities);
  w.family("process_resident_memory_bytes", "gauge",
           "Resident memory of this process in bytes.");
  w.sample("process_resident_memory_bytes", {}, x.resident_bytes);
  return w.take();
}

uint64_t resident_memory_bytes() {
  std::ifstream in{"/proc/self/statm"};
  uint64_t size = 0;
  uint64_t resident = 0;
  if (!(in >> size >> resident))
    return 0;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

} // namespace ferry::detail
