// dashboard: what a node's HTTP endpoint answers (docs/monitoring.md).
//
//   GET  /metrics                    Prometheus' text exposition format
//   GET  /                           the dashboard page (index.html), and
//   GET  /dashboard.js, /dashboard.css   its files, from `files`
//   GET  /chart.js                   Chart.js, from `chart_js` (Debian's
//                                    libjs-chart.js)
//   GET  /api/v1                     the API's index
//   GET  /api/v1/{node,members,links,store,entities,rates,snapshot}
//   GET  /api/v1/events              the snapshot as server-sent events,
//                                    one per `event_interval`
//   GET  /api/v1/members/snapshot?address=HOST:PORT
//                                    another member's snapshot, asked of
//                                    it through the cluster
//   POST /api/v1/members/{down,leave}?address=HOST:PORT
//                                    an operator's action, only with
//                                    `Authorization: Bearer <token>` and
//                                    only when a token is configured
//
// Every answer is computed from the node's figures when asked; `tick`
// samples them into the rate history (server thread). A file that cannot
// be read answers 404 naming the path and the option that sets it. No
// string from the node (names, error texts) is ever inserted into HTML
// here: the page is static, and it reads the API's JSON, whose strings are
// escaped for HTML too (metrics/json_writer.hpp).
//
// Thread-safety: `answer` and `tick` on the metrics server's thread only;
// `snapshot_json` from any thread (a mutex guards the rate history).
#pragma once

#include "member_host.hpp"
#include "metrics/dashboard_json.hpp"
#include "metrics/exposition.hpp"
#include "metrics/metrics_server.hpp"
#include "metrics/rate_history.hpp"
#include "thread_safety.hpp"

#include <chrono>
#include <functional>
#include <string>

namespace ferry::detail {

/// Where the endpoint finds its files and what it allows.
struct dashboard_settings {
  /// Operators' token (empty: actions are off).
  std::string token;
  /// Directory holding index.html, dashboard.js and dashboard.css.
  std::string files;
  /// Path of Chart.js.
  std::string chart_js;
};

/// What the endpoint reads of its node.
struct dashboard_source {
  /// The node's figures now (any thread may call it).
  std::function<node_figures()> figures;
  /// What an operator may do now (empty functions: not a cluster member).
  std::function<cluster_actions()> actions;
};

class dashboard {
public:
  dashboard(dashboard_settings settings, dashboard_source source);

  /// Answers one request.
  http_answer answer(const http_request& req);

  /// Samples the node's figures into the rate history.
  void tick();

  /// Returns the node's snapshot (`/api/v1/snapshot`).
  std::string snapshot_json();

private:
  http_answer get(const http_request& req);
  http_answer post(const http_request& req);
  http_answer member_snapshot(const http_request& req);
  http_answer file(const std::string& path, const char* type,
                   const char* option);
  node_facts facts() const;

  const dashboard_settings settings_;
  const dashboard_source source_;
  const std::chrono::steady_clock::time_point started_;
  mutable mutex mtx_;
  rate_history history_ FERRY_GUARDED_BY(mtx_);
};

/// Returns `x` as a snapshot with no rate history (a node without an
/// endpoint, asked by another member).
std::string snapshot_json(const node_figures& x);

/// Returns the directory of the dashboard's files: `configured` if set,
/// else the source tree's (when this build's sources are there), else the
/// installed one.
std::string dashboard_files(const std::string& configured);

} // namespace ferry::detail
