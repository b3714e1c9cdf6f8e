// metrics_server: the HTTP endpoint of a node (metrics, dashboard, API).
//
// Owns one thread running one Boost.Asio io_context, an acceptor and its
// connections; HTTP is Boost.Beast's. Every whole request goes to the
// `handler`, which returns the answer: a body, or a stream of server-sent
// events (`http_answer::events`, called every `event_interval` on the
// server's thread for as long as the client stays). A request whose header
// exceeds `max_header_bytes` gets 431, a body above `max_body_bytes` 413,
// any other malformed request 400. A connection that has not sent a whole
// request within `read_timeout` is closed, and beyond `max_connections`
// open at once (event streams among them, at most `max_event_streams`) a
// new connection is closed as soon as it is accepted: a slow or hostile
// client costs the server thread a little work and never reaches the
// node's actors (they run on CAF's threads; the handler only reads
// counters and takes the node's short locks). `tick`, if set, runs every
// `tick_interval` on the server's thread (the dashboard's rate history).
//
// Nothing thrown inside the server (Beast's handlers, an allocation, the
// handler) leaves its thread: each is caught, logged through `log`, and the
// connection it concerned is dropped (or answered 500).
//
// Thread-safety: `start`, `port` and the destructor from any one thread;
// `handler`, `events`, `tick` and `log` are called on the server's thread.
#pragma once

#include <caf/expected.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace ferry::detail {

/// Limits a metrics server applies to its clients.
struct metrics_limits {
  /// Longest time a connection may take to send one request.
  std::chrono::milliseconds read_timeout{5000};
  /// Largest request header (request line included).
  size_t max_header_bytes = 8 * 1024;
  /// Largest request body.
  size_t max_body_bytes = 4 * 1024;
  /// Most connections open at once.
  size_t max_connections = 64;
  /// Most event streams open at once (within `max_connections`).
  size_t max_event_streams = 16;
  /// Time between two events of a stream.
  std::chrono::milliseconds event_interval{1000};
  /// Time between two calls of `tick`.
  std::chrono::milliseconds tick_interval{1000};
};

/// A request as the handler sees it.
struct http_request {
  /// "GET", "POST", ... as sent.
  std::string method;
  /// The target up to its query.
  std::string path;
  /// The target after '?' (empty when none).
  std::string query;
  /// The `Authorization` header's value.
  std::string authorization;
  std::string body;
};

/// The handler's answer.
struct http_answer {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  /// The methods a 405 answer names (`Allow`).
  std::string allow;
  /// Set: the answer is an event stream (`text/event-stream`); each call
  /// returns the next bytes to send (whole events; empty: nothing now).
  std::function<std::string()> events;
};

class metrics_server {
public:
  using limits = metrics_limits;

  using handler_fn = std::function<http_answer(const http_request&)>;
  using log_fn = std::function<void(const std::string&)>;
  using tick_fn = std::function<void()>;

  /// Listens on `address`:`port` (0: any free port) and serves on a thread
  /// of its own. Fails with `invalid_config` naming `option`, the address,
  /// the port and the OS error when it cannot listen.
  [[nodiscard]] static caf::expected<std::unique_ptr<metrics_server>>
  start(const std::string& address, uint16_t port, handler_fn handler,
        log_fn log, limits lim = {}, tick_fn tick = {});

  /// Stops serving: closes every connection and joins the thread.
  ~metrics_server();

  metrics_server(const metrics_server&) = delete;
  metrics_server& operator=(const metrics_server&) = delete;

  /// Returns the port the server listens on.
  uint16_t port() const;

  class impl;

private:
  explicit metrics_server(std::unique_ptr<impl> ptr);

  std::unique_ptr<impl> impl_;
};

} // namespace ferry::detail
