// metrics_server: Boost.Beast on one io_context and one thread (see
// metrics/metrics_server.hpp).
//
// Every handler runs on the server's thread, so the count of open
// connections is a plain integer. Each connection reads one request at a
// time under a deadline (reading and writing alike), answers it, and reads
// the next while the client keeps the connection alive. The state the
// connections share lives in a `shared_state` they hold, so a connection
// destroyed while the io_context shuts down touches nothing else.

#include "metrics/metrics_server.hpp"

#include "ferry/errc.hpp"

#include "ferry/serializers/detail/error.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <optional>
#include <thread>

namespace ferry::detail {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

/// The content type of Prometheus' text exposition format.
constexpr const char* exposition_type = "text/plain; version=0.0.4; "
                                        "charset=utf-8";

/// What the server and its connections share.
struct shared_state {
  metrics_server::render_fn render;
  metrics_server::log_fn log;
  metrics_server::limits lim;
  /// Connections open now (server thread only).
  size_t open = 0;
};

/// One client connection.
class connection : public std::enable_shared_from_this<connection> {
public:
  connection(tcp::socket socket, std::shared_ptr<shared_state> state)
    : stream_(std::move(socket)),
      state_(std::move(state)) {
    ++state_->open;
  }

  ~connection() { --state_->open; }

  void read() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(state_->lim.max_header_bytes));
    parser_->body_limit(state_->lim.max_header_bytes);
    stream_.expires_after(state_->lim.read_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       self->guarded([&] { self->on_read(ec); });
                     });
  }

private:
  /// Runs `f`; what it throws closes this connection and is logged.
  template <class F>
  void guarded(F&& f) {
    try {
      f();
    } catch (...) {
      state_->log("metrics endpoint: dropped a connection: " +
                  serializers::detail::current_exception_text());
      close();
    }
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::header_limit) {
      answer(http::status::request_header_fields_too_large,
             "request header too large\n", false);
      return;
    }
    if (ec &&
        ec.category() ==
          http::make_error_code(http::error::bad_method).category() &&
        ec != http::error::end_of_stream) {
      answer(http::status::bad_request, "malformed request\n", false);
      return;
    }
    if (ec) { // closed, timed out or failed: nothing to answer
      close();
      return;
    }
    auto& req = parser_->get();
    version_ = req.version() == 10 ? 10 : 11;
    auto keep_alive = req.keep_alive();
    if (req.method() != http::verb::get) {
      answer(http::status::method_not_allowed, "only GET is served\n",
             keep_alive);
      return;
    }
    auto target = std::string_view{req.target().data(), req.target().size()};
    target = target.substr(0, target.find('?'));
    if (target != "/metrics") {
      answer(http::status::not_found, "only /metrics is served\n", keep_alive);
      return;
    }
    std::string body;
    try {
      body = state_->render();
    } catch (...) {
      state_->log("metrics endpoint: rendering the metrics failed: " +
                  serializers::detail::current_exception_text());
      answer(http::status::internal_server_error, "rendering failed\n", false);
      return;
    }
    answer(http::status::ok, std::move(body), keep_alive, exposition_type);
  }

  void answer(http::status status, std::string body, bool keep_alive,
              const char* type = "text/plain; charset=utf-8") {
    res_ = {};
    res_.version(version_);
    res_.result(status);
    res_.set(http::field::server, "ferry");
    res_.set(http::field::content_type, type);
    if (status == http::status::method_not_allowed)
      res_.set(http::field::allow, "GET");
    res_.keep_alive(keep_alive);
    res_.body() = std::move(body);
    res_.prepare_payload();
    stream_.expires_after(state_->lim.read_timeout);
    http::async_write(
      stream_, res_, [self = shared_from_this()](beast::error_code ec, size_t) {
        self->guarded([&] { self->on_write(ec); });
      });
  }

  void on_write(beast::error_code ec) {
    if (!ec && res_.keep_alive()) {
      read();
      return;
    }
    if (!ec && res_.result() != http::status::ok) {
      // The client may still be sending what was refused: read and drop it
      // (up to a bound, within the deadline) before closing, so that the
      // answer reaches it instead of a reset.
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      stream_.expires_after(state_->lim.read_timeout);
      drain();
      return;
    }
    close();
  }

  void drain() {
    constexpr size_t chunk = 64 * 1024;
    stream_.async_read_some(
      buffer_.prepare(chunk),
      [self = shared_from_this()](beast::error_code ec, size_t n) {
        self->guarded([&] {
          self->drained_ += n;
          if (ec || self->drained_ > max_drained) {
            self->close();
            return;
          }
          self->drain();
        });
      });
  }

  /// Most bytes read and dropped after refusing a request.
  static constexpr size_t max_drained = 4 * 1024 * 1024;

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> parser_;
  http::response<http::string_body> res_;
  /// HTTP version of the answers: the request's (1.0 or 1.1).
  unsigned version_ = 11;
  /// Bytes dropped after a refused request.
  size_t drained_ = 0;
  std::shared_ptr<shared_state> state_;
};

} // namespace

// -- impl ---------------------------------------------------------------------

class metrics_server::impl {
public:
  impl(render_fn render, log_fn log, limits lim)
    : state_(std::make_shared<shared_state>(
        shared_state{std::move(render), std::move(log), lim, 0})) {
    // nop
  }

  ~impl() {
    ioc_.stop();
    if (thread_.joinable())
      thread_.join();
  }

  caf::error listen(const std::string& address, uint16_t port) {
    auto fail = [&](const std::string& why) {
      return caf::make_error(errc::invalid_config,
                             "ferry.metrics.port: cannot listen on " + address +
                               ":" + std::to_string(port) + " (set by " +
                               "ferry.metrics.address and " +
                               "ferry.metrics.port): " + why);
    };
    beast::error_code ec;
    auto ip = asio::ip::make_address(address, ec);
    if (ec)
      return fail("ferry.metrics.address is not an IP address (" +
                  ec.message() + ")");
    tcp::endpoint endpoint{ip, port};
    if (acceptor_.open(endpoint.protocol(), ec); ec)
      return fail(ec.message());
    if (acceptor_.set_option(asio::socket_base::reuse_address(true), ec); ec)
      return fail(ec.message());
    if (acceptor_.bind(endpoint, ec); ec)
      return fail(ec.message());
    if (acceptor_.listen(asio::socket_base::max_listen_connections, ec); ec)
      return fail(ec.message());
    port_ = acceptor_.local_endpoint(ec).port();
    if (ec)
      return fail(ec.message());
    accept();
    thread_ = std::thread{[this] {
      run();
    }};
    return caf::none;
  }

  uint16_t port() const { return port_; }

private:
  void run() {
    for (;;) {
      try {
        ioc_.run();
        return;
      } catch (...) {
        state_->log("metrics endpoint: " +
                    serializers::detail::current_exception_text());
      }
    }
  }

  void accept() {
    acceptor_.async_accept(
      ioc_, [this](beast::error_code ec, tcp::socket socket) {
        if (ec == asio::error::operation_aborted)
          return;
        if (ec) {
          // Out of descriptors, say: try again shortly instead of spinning.
          retry_.expires_after(std::chrono::milliseconds{10});
          retry_.async_wait([this](beast::error_code) { accept(); });
          return;
        }
        try {
          if (state_->open >= state_->lim.max_connections) {
            beast::error_code ignored;
            socket.close(ignored);
          } else {
            std::make_shared<connection>(std::move(socket), state_)->read();
          }
        } catch (...) {
          state_->log("metrics endpoint: dropped a connection: " +
                      serializers::detail::current_exception_text());
        }
        accept();
      });
  }

  std::shared_ptr<shared_state> state_;
  asio::io_context ioc_{1};
  tcp::acceptor acceptor_{ioc_};
  asio::steady_timer retry_{ioc_};
  uint16_t port_ = 0;
  std::thread thread_;
};

// -- metrics_server -----------------------------------------------------------

caf::expected<std::unique_ptr<metrics_server>>
metrics_server::start(const std::string& address, uint16_t port,
                      render_fn render, log_fn log, limits lim) {
  try {
    auto ptr = std::make_unique<impl>(std::move(render), std::move(log), lim);
    if (auto err = ptr->listen(address, port))
      return err;
    return std::unique_ptr<metrics_server>{new metrics_server(std::move(ptr))};
  } catch (...) {
    return caf::make_error(errc::invalid_config,
                           "ferry.metrics.port: cannot serve on " + address +
                             ":" + std::to_string(port) + ": " +
                             serializers::detail::current_exception_text());
  }
}

metrics_server::metrics_server(std::unique_ptr<impl> ptr)
  : impl_(std::move(ptr)) {
  // nop
}

metrics_server::~metrics_server() = default;

uint16_t metrics_server::port() const {
  return impl_->port();
}

} // namespace ferry::detail
