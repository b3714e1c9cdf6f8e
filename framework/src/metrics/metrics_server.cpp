// metrics_server: Boost.Beast on one io_context and one thread (see
// metrics/metrics_server.hpp).
//
// Every handler runs on the server's thread, so the count of open
// connections is a plain integer. Each connection reads one request at a
// time under a deadline (reading and writing alike), answers it, and reads
// the next while the client keeps the connection alive. The state the
// connections share lives in a `shared_state` they hold, so a connection
// destroyed while the io_context shuts down touches nothing else. An answer
// that is an event stream ends the request loop: the connection writes the
// header, then the stream's events at every interval until a write fails.

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

/// What the server and its connections share.
struct shared_state {
  metrics_server::handler_fn handler;
  metrics_server::log_fn log;
  metrics_server::limits lim;
  /// Connections open now, and event streams among them (server thread
  /// only).
  size_t open = 0;
  size_t streams = 0;
};

/// One client connection.
class connection : public std::enable_shared_from_this<connection> {
public:
  connection(tcp::socket socket, std::shared_ptr<shared_state> state)
    : stream_(std::move(socket)),
      state_(std::move(state)) {
    ++state_->open;
  }

  ~connection() {
    --state_->open;
    if (streaming_)
      --state_->streams;
  }

  void read() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(state_->lim.max_header_bytes));
    parser_->body_limit(state_->lim.max_body_bytes);
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
    if (ec == http::error::body_limit) {
      answer(http::status::payload_too_large,
             "request body above " +
               std::to_string(state_->lim.max_body_bytes) + " bytes\n",
             false);
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
    http_request in;
    in.method = std::string{req.method_string()};
    auto target = std::string_view{req.target().data(), req.target().size()};
    auto q = target.find('?');
    in.path = std::string{target.substr(0, q)};
    if (q != std::string_view::npos)
      in.query = std::string{target.substr(q + 1)};
    if (auto i = req.find(http::field::authorization); i != req.end())
      in.authorization = std::string{i->value()};
    in.body = std::move(req.body());
    http_answer out;
    try {
      out = state_->handler(in);
    } catch (...) {
      state_->log("metrics endpoint: answering " + in.method + " " + in.path +
                  " failed: " + serializers::detail::current_exception_text());
      answer(http::status::internal_server_error, "answering failed\n", false);
      return;
    }
    if (out.events) {
      stream(std::move(out.events));
      return;
    }
    answer(static_cast<http::status>(out.status), std::move(out.body),
           keep_alive, out.content_type, out.allow);
  }

  void answer(http::status status, std::string body, bool keep_alive,
              const std::string& type = "text/plain; charset=utf-8",
              const std::string& allow = {}) {
    res_ = {};
    res_.version(version_);
    res_.result(status);
    res_.set(http::field::server, "ferry");
    res_.set(http::field::content_type, type);
    res_.set(http::field::cache_control, "no-store");
    res_.set("X-Content-Type-Options", "nosniff");
    if (!allow.empty())
      res_.set(http::field::allow, allow);
    res_.keep_alive(keep_alive);
    res_.body() = std::move(body);
    res_.prepare_payload();
    stream_.expires_after(state_->lim.read_timeout);
    http::async_write(
      stream_, res_, [self = shared_from_this()](beast::error_code ec, size_t) {
        self->guarded([&] { self->on_write(ec); });
      });
  }

  // -- event streams ----------------------------------------------------------

  /// Answers with an event stream whose events `next` makes.
  void stream(std::function<std::string()> next) {
    if (state_->streams >= state_->lim.max_event_streams) {
      answer(http::status::service_unavailable,
             "too many event streams open (at most " +
               std::to_string(state_->lim.max_event_streams) + ")\n",
             false);
      return;
    }
    ++state_->streams;
    streaming_ = true;
    next_ = std::move(next);
    head_ = {};
    head_.version(version_);
    head_.result(http::status::ok);
    head_.set(http::field::server, "ferry");
    head_.set(http::field::content_type, "text/event-stream");
    head_.set(http::field::cache_control, "no-store");
    head_.keep_alive(false); // the body runs until the connection closes
    serializer_.emplace(head_);
    stream_.expires_after(state_->lim.read_timeout);
    http::async_write_header(
      stream_, *serializer_,
      [self = shared_from_this()](beast::error_code ec, size_t) {
        self->guarded([&] {
          if (ec) {
            self->close();
            return;
          }
          self->send_event();
        });
      });
  }

  /// Sends the stream's next event now and schedules the one after.
  void send_event() {
    event_ = next_();
    if (event_.empty()) // an SSE comment keeps idle proxies from closing
      event_ = ":\n\n";
    stream_.expires_after(state_->lim.read_timeout);
    asio::async_write(
      stream_, asio::buffer(event_),
      [self = shared_from_this()](beast::error_code ec, size_t) {
        self->guarded([&] {
          if (ec) {
            self->close();
            return;
          }
          self->wait_event();
        });
      });
  }

  void wait_event() {
    stream_.expires_never();
    if (!timer_)
      timer_.emplace(stream_.get_executor());
    timer_->expires_after(state_->lim.event_interval);
    timer_->async_wait([self = shared_from_this()](beast::error_code ec) {
      self->guarded([&] {
        if (ec || !self->stream_.socket().is_open())
          return;
        self->send_event();
      });
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
    if (timer_)
      timer_->cancel();
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  /// An event stream's header, its serializer, its event source, the event
  /// being written and the timer between events.
  bool streaming_ = false;
  http::response<http::empty_body> head_;
  std::optional<http::response_serializer<http::empty_body>> serializer_;
  std::function<std::string()> next_;
  std::string event_;
  std::optional<asio::steady_timer> timer_;
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
  impl(handler_fn handler, log_fn log, limits lim, tick_fn tick)
    : state_(std::make_shared<shared_state>(
        shared_state{std::move(handler), std::move(log), lim, 0, 0})),
      tick_(std::move(tick)) {
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
    if (tick_)
      schedule_tick();
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

  void schedule_tick() {
    tick_timer_.expires_after(state_->lim.tick_interval);
    tick_timer_.async_wait([this](beast::error_code ec) {
      if (ec)
        return;
      try {
        tick_();
      } catch (...) {
        state_->log("metrics endpoint: " +
                    serializers::detail::current_exception_text());
      }
      schedule_tick();
    });
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
  tick_fn tick_;
  asio::steady_timer tick_timer_{ioc_};
  uint16_t port_ = 0;
  std::thread thread_;
};

// -- metrics_server -----------------------------------------------------------

caf::expected<std::unique_ptr<metrics_server>>
metrics_server::start(const std::string& address, uint16_t port,
                      handler_fn handler, log_fn log, limits lim,
                      tick_fn tick) {
  try {
    auto ptr = std::make_unique<impl>(std::move(handler), std::move(log), lim,
                                      std::move(tick));
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
