// dashboard_json: a node's figures as the JSON of its HTTP API
// (`/api/v1/...`, docs/monitoring.md lists every field).
//
// Each function writes one section as a JSON object into a json_writer:
// the node, its cluster's members as it sees them, its links (down ones
// with the reason they went), the host store, the entities it hosts, and
// the rate history. Incarnations are 64-bit and written as decimal
// strings (JavaScript's numbers hold 53 bits). Rates come from the
// history's last interval.
//
// Thread-safety: plain functions on values.
#pragma once

#include "metrics/exposition.hpp"
#include "metrics/json_writer.hpp"
#include "metrics/rate_history.hpp"

#include <cstdint>

namespace ferry::detail {

/// What the `node` section says besides the figures.
struct node_facts {
  /// Seconds since the node started.
  double uptime_seconds = 0;
  /// Whether operator actions are on (a token is configured).
  bool actions = false;
  /// Milliseconds since the Unix epoch, now.
  int64_t now_ms = 0;
};

void write_node(json_writer& out, const node_figures& x, const node_facts& f);

void write_members(json_writer& out, const node_figures& x);

void write_links(json_writer& out, const node_figures& x,
                 const rate_history& h);

void write_store(json_writer& out, const node_figures& x);

void write_entities(json_writer& out, const node_figures& x);

/// The samples kept (`all`), or only the last one.
void write_rates(json_writer& out, const rate_history& h, bool all);

/// Every section in one object: `node`, `members`, `links`, `store`,
/// `entities` and `rates` (the last sample only).
void write_snapshot(json_writer& out, const node_figures& x,
                    const node_facts& f, const rate_history& h);

} // namespace ferry::detail
