// metrics_server: the HTTP endpoint that serves a node's metrics.
//
// Owns one thread running one Boost.Asio io_context, an acceptor and its
// connections; HTTP is Boost.Beast's. `GET /metrics` answers with the text
// the `render` function returns (Prometheus' text exposition format); any
// other path gets 404, any other method 405, a request whose header exceeds
// `max_header_bytes` 431, any other malformed request 400. A connection
// that has not sent a whole request within `read_timeout` is closed, and
// beyond `max_connections` open at once a new connection is closed as soon
// as it is accepted: a slow or hostile client costs the server thread a
// little work and never reaches the node's actors (they run on CAF's
// threads; `render` only reads counters and takes the node's short locks).
//
// Nothing thrown inside the server (Beast's handlers, an allocation,
// `render`) leaves its thread: each is caught, logged through `log`, and
// the connection it concerned is dropped.
//
// Thread-safety: `start`, `port` and the destructor from any one thread;
// `render` and `log` are called on the server's thread.
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
  /// Most connections open at once.
  size_t max_connections = 64;
};

class metrics_server {
public:
  using limits = metrics_limits;

  using render_fn = std::function<std::string()>;
  using log_fn = std::function<void(const std::string&)>;

  /// Listens on `address`:`port` (0: any free port) and serves on a thread
  /// of its own. Fails with `invalid_config` naming `option`, the address,
  /// the port and the OS error when it cannot listen.
  [[nodiscard]] static caf::expected<std::unique_ptr<metrics_server>>
  start(const std::string& address, uint16_t port, render_fn render, log_fn log,
        limits lim = {});

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
