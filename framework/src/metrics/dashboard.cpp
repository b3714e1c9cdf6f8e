// dashboard (see metrics/dashboard.hpp).

#include "metrics/dashboard.hpp"

#include "metrics/dashboard_json.hpp"
#include "metrics/json_writer.hpp"

#include "ferry/errc.hpp"

#include <openssl/crypto.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#ifndef FERRY_DASHBOARD_SOURCE_DIR
#define FERRY_DASHBOARD_SOURCE_DIR ""
#endif
#ifndef FERRY_DASHBOARD_INSTALL_DIR
#define FERRY_DASHBOARD_INSTALL_DIR ""
#endif

namespace ferry::detail {

namespace {

constexpr const char* json_type = "application/json";

/// Largest file the endpoint serves (Chart.js is about 200 KB).
constexpr uintmax_t max_file_bytes = 8 * 1024 * 1024;

http_answer json_answer(unsigned status, std::string body) {
  http_answer a;
  a.status = status;
  a.content_type = json_type;
  a.body = std::move(body);
  return a;
}

/// `{"error": what}` with `status`.
http_answer json_error(unsigned status, const std::string& what) {
  json_writer out;
  out.begin_object().field("error", what).end_object();
  return json_answer(status, out.take());
}

http_answer not_allowed(const std::string& path, const char* allow) {
  auto a = json_error(405, path + " takes " + allow + " only");
  a.allow = allow;
  return a;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// `x` with %XX and '+' decoded (application/x-www-form-urlencoded).
std::string url_decode(std::string_view x) {
  std::string out;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == '+') {
      out += ' ';
    } else if (x[i] == '%' && i + 2 < x.size() && hex_digit(x[i + 1]) >= 0 &&
               hex_digit(x[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(x[i + 1]) * 16 + hex_digit(x[i + 2]));
      i += 2;
    } else {
      out += x[i];
    }
  }
  return out;
}

/// The value of `name` in a form-encoded `text` (empty when absent).
std::string form_value(std::string_view text, std::string_view name) {
  while (!text.empty()) {
    auto amp = text.find('&');
    auto pair = text.substr(0, amp);
    auto eq = pair.find('=');
    if (url_decode(pair.substr(0, eq)) == name)
      return eq == std::string_view::npos ? std::string{}
                                          : url_decode(pair.substr(eq + 1));
    if (amp == std::string_view::npos)
      break;
    text.remove_prefix(amp + 1);
  }
  return {};
}

/// Whether `given` (an Authorization header) carries `token`, compared in
/// time independent of where they differ.
bool token_matches(const std::string& given, const std::string& token) {
  constexpr std::string_view scheme = "Bearer ";
  if (given.size() != scheme.size() + token.size() ||
      given.compare(0, scheme.size(), scheme) != 0)
    return false;
  return CRYPTO_memcmp(given.data() + scheme.size(), token.data(),
                       token.size()) == 0;
}

} // namespace

std::string dashboard_files(const std::string& configured) {
  if (!configured.empty())
    return configured;
  std::error_code ec;
  std::string source = FERRY_DASHBOARD_SOURCE_DIR;
  if (!source.empty() && std::filesystem::exists(source + "/index.html", ec))
    return source;
  return FERRY_DASHBOARD_INSTALL_DIR;
}

dashboard::dashboard(dashboard_settings settings, dashboard_source source)
  : settings_(std::move(settings)),
    source_(std::move(source)),
    started_(std::chrono::steady_clock::now()) {
  // nop
}

node_facts dashboard::facts() const {
  node_facts f;
  f.uptime_seconds =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - started_)
      .count();
  f.actions = !settings_.token.empty();
  f.now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
               .count();
  return f;
}

void dashboard::tick() {
  auto figures = source_.figures();
  auto now = facts().now_ms;
  lock_guard guard{mtx_};
  history_.sample(figures, now);
}

std::string dashboard::snapshot_json() {
  auto figures = source_.figures();
  json_writer out;
  lock_guard guard{mtx_};
  write_snapshot(out, figures, facts(), history_);
  return out.take();
}

std::string snapshot_json(const node_figures& x) {
  json_writer out;
  write_snapshot(out, x, node_facts{}, rate_history{});
  return out.take();
}

http_answer dashboard::answer(const http_request& req) {
  if (req.method == "POST") {
    if (req.path == "/api/v1/members/down" ||
        req.path == "/api/v1/members/leave")
      return post(req);
    return not_allowed(req.path, "GET");
  }
  if (req.path == "/api/v1/members/down" || req.path == "/api/v1/members/leave")
    return not_allowed(req.path, "POST");
  if (req.method != "GET") {
    auto a = json_error(405, "this endpoint serves GET (and POST for "
                             "operator actions)");
    a.allow = "GET";
    return a;
  }
  return get(req);
}

http_answer dashboard::get(const http_request& req) {
  auto& path = req.path;
  if (path == "/metrics") {
    http_answer a;
    a.content_type = "text/plain; version=0.0.4; charset=utf-8";
    a.body = render_exposition(source_.figures());
    return a;
  }
  if (path == "/" || path == "/index.html")
    return file("index.html", "text/html; charset=utf-8",
                "ferry.metrics.dashboard-files");
  if (path == "/dashboard.js")
    return file("dashboard.js", "text/javascript; charset=utf-8",
                "ferry.metrics.dashboard-files");
  if (path == "/dashboard.css")
    return file("dashboard.css", "text/css; charset=utf-8",
                "ferry.metrics.dashboard-files");
  if (path == "/chart.js")
    return file(settings_.chart_js, "text/javascript; charset=utf-8",
                "ferry.metrics.chart-js");
  json_writer out;
  if (path == "/api/v1" || path == "/api/v1/") {
    out.begin_object().key("endpoints").begin_array();
    for (auto x :
         {"/api/v1/node", "/api/v1/members", "/api/v1/links", "/api/v1/store",
          "/api/v1/entities", "/api/v1/rates", "/api/v1/snapshot",
          "/api/v1/events", "/api/v1/members/snapshot?address=HOST:PORT"})
      out.value(x);
    out.end_array().key("actions").begin_array();
    for (auto x : {"POST /api/v1/members/down?address=HOST:PORT",
                   "POST /api/v1/members/leave?address=HOST:PORT"})
      out.value(x);
    out.end_array().end_object();
    return json_answer(200, out.take());
  }
  if (path == "/api/v1/node") {
    write_node(out, source_.figures(), facts());
  } else if (path == "/api/v1/members") {
    write_members(out, source_.figures());
  } else if (path == "/api/v1/links") {
    auto figures = source_.figures();
    lock_guard guard{mtx_};
    write_links(out, figures, history_);
  } else if (path == "/api/v1/store") {
    write_store(out, source_.figures());
  } else if (path == "/api/v1/entities") {
    write_entities(out, source_.figures());
  } else if (path == "/api/v1/rates") {
    lock_guard guard{mtx_};
    write_rates(out, history_, true);
  } else if (path == "/api/v1/members/snapshot") {
    return member_snapshot(req);
  } else if (path == "/api/v1/snapshot") {
    return json_answer(200, snapshot_json());
  } else if (path == "/api/v1/events") {
    http_answer a;
    a.events = [this] {
      return "event: snapshot\ndata: " + snapshot_json() + "\n\n";
    };
    return a;
  } else if (path.rfind("/api/", 0) == 0) {
    return json_error(404, "no API endpoint " + path +
                             "; GET /api/v1 lists "
                             "them");
  } else {
    http_answer a;
    a.status = 404;
    a.body = "no page " + path +
             " here; the dashboard is at /, the metrics "
             "at /metrics, the API under /api/v1\n";
    return a;
  }
  return json_answer(200, out.take());
}

http_answer dashboard::post(const http_request& req) {
  if (settings_.token.empty())
    return json_error(403, "operator actions are off on this node: set "
                           "ferry.metrics.token to turn them on");
  if (!token_matches(req.authorization, settings_.token))
    return json_error(403, "the request carries no token or another one "
                           "than ferry.metrics.token (send the header "
                           "\"Authorization: Bearer <token>\")");
  auto address = form_value(req.query, "address");
  if (address.empty())
    address = form_value(req.body, "address");
  if (address.empty())
    return json_error(400, req.path + " needs address=HOST:PORT (in the "
                                      "query or a form body)");
  auto actions = source_.actions ? source_.actions() : cluster_actions{};
  bool down = req.path == "/api/v1/members/down";
  auto& act = down ? actions.down : actions.leave;
  if (!act)
    return json_error(409, "this node joins no cluster (set "
                           "ferry.cluster.name)");
  auto done = act(address);
  if (!done)
    return json_error(409, render(done.error()));
  if (!*done)
    return json_error(404, "no member at " + address +
                             " in this node's "
                             "view of the cluster");
  json_writer out;
  out.begin_object()
    .field("ok", true)
    .field("action", down ? "down" : "leave")
    .field("address", address)
    .end_object();
  return json_answer(200, out.take());
}

http_answer dashboard::member_snapshot(const http_request& req) {
  auto address = form_value(req.query, "address");
  if (address.empty())
    return json_error(400, req.path + " needs address=HOST:PORT");
  auto actions = source_.actions ? source_.actions() : cluster_actions{};
  if (!actions.figures)
    return json_error(409, "this node joins no cluster (set "
                           "ferry.cluster.name)");
  auto got = actions.figures(address);
  if (!got)
    return json_error(502, render(got.error()));
  if (got->empty())
    return json_error(404, "no member at " + address +
                             " in this node's "
                             "view of the cluster");
  return json_answer(200, std::move(*got));
}

http_answer dashboard::file(const std::string& name, const char* type,
                            const char* option) {
  auto path = name.find('/') == std::string::npos
                ? dashboard_files(settings_.files) + "/" + name
                : name;
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  std::ifstream in{path, std::ios::binary};
  if (ec || !in || size > max_file_bytes) {
    http_answer a;
    a.status = 404;
    a.body = "cannot read " + path +
             (ec ? " (" + ec.message() + ")" : std::string{}) + "; set " +
             option +
             (std::string_view{option} == "ferry.metrics.chart-js"
                ? " or install Debian's libjs-chart.js"
                : "") +
             "\n";
    return a;
  }
  std::ostringstream body;
  body << in.rdbuf();
  http_answer a;
  a.content_type = type;
  a.body = body.str();
  return a;
}

} // namespace ferry::detail
