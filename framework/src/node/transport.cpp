// The node's transport: listening, dialing, and the streams and times of
// its connections (node_impl's part; see node/node_impl.hpp).
//
// Every connection runs on one of the node's I/O threads and starts with
// ferry's handshake (node/handshake.hpp). A plain node's connections are
// plain; it tells a TLS client by its first bytes (the reader expects
// ferry's preface) and closes. A TLS node connects with TLS, except to an
// address whose link config says `plain`, and tells a TLS peer from a
// plain one by the first byte it sends; whether a plain peer may link is
// the handshake's to decide, by the peer's name (`link_config::plain`).
//
// Thread-safety: every function may be called from any thread; the
// listeners are guarded by `listen_mtx_`.
#include "node/handshake.hpp"
#include "node/node_impl.hpp"
#include "transport/plain_stream.hpp"
#include "transport/tls_context.hpp"
#include "transport/tls_stream.hpp"

#include "ferry/errc.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

namespace ferry::detail {

namespace asio = boost::asio;

namespace {

/// Counts one connection object of a node while it lives.
struct connection_token {
  std::shared_ptr<activity_counter> counter;
  explicit connection_token(std::shared_ptr<activity_counter> c)
    : counter(std::move(c)) {
    counter->enter();
  }
  ~connection_token() { counter->leave(); }
};

} // namespace

void node_impl::set_tls(std::shared_ptr<const net::tls_context> x) {
  tls_ = std::move(x);
}

net::connection_timing node_impl::timing() const {
  net::connection_timing result;
  result.handshake_timeout = cfg_.handshake_timeout;
  result.heartbeat_interval = cfg_.default_link.heartbeat_interval;
  result.connection_timeout = cfg_.default_link.connection_timeout;
  result.time = time_;
  return result;
}

net::stream_maker node_impl::streams(bool server,
                                     const std::string& address) const {
  net::stream_maker result;
  auto tls = tls_;
  auto& me = cfg_.node_name;
  result.make =
    [tls, me](int fd, bool use_tls,
              bool is_server) -> caf::expected<std::unique_ptr<net::stream>> {
    if (!use_tls)
      return std::unique_ptr<net::stream>{new net::plain_stream(fd)};
    if (!tls)
      return caf::make_error(errc::handshake_failed,
                             "a TLS peer connected to node " + me +
                               ", which has no TLS credentials (its "
                               "ferry.tls options are not set)");
    auto made = tls->make_stream(fd, is_server);
    if (!made)
      return std::move(made.error());
    return std::unique_ptr<net::stream>{std::move(*made)};
  };
  result.explain = [](net::stream& s, const std::string&) {
    auto* t = dynamic_cast<net::tls_stream*>(&s);
    return t != nullptr ? t->explain() : std::string{};
  };
  if (server)
    result.detect = tls != nullptr;
  else
    result.tls = tls != nullptr && !config_for("", address).plain;
  return result;
}

caf::expected<uint16_t> node_impl::open_port(uint16_t port,
                                             const std::string& address) {
  auto& io = *io_;
  auto accept = [this](asio::ip::tcp::socket sock) {
    auto h = std::make_shared<handshake>(*this, std::string{}, nullptr);
    auto conn = net::connection::make(
      std::move(sock), true, streams(true, {}), timing(), h,
      std::make_shared<connection_token>(open_connections_));
    conn->start();
  };
  auto made = net::listener::open(
    io.next(), address, port,
    [&io]() -> asio::io_context& { return io.next(); }, std::move(accept),
    [this](const std::string& line) { log(line); });
  if (!made)
    return std::move(made.error());
  lock_guard guard{listen_mtx_};
  listeners_.push_back(*made);
  return (*made)->port();
}

void node_impl::dial(const std::string& host, uint16_t port,
                     std::shared_ptr<connect_wait> waiter) {
  auto& ioc = io_->next();
  auto address = host + ":" + std::to_string(port);
  auto resolver = std::make_shared<asio::ip::tcp::resolver>(ioc);
  auto sock = std::make_shared<asio::ip::tcp::socket>(ioc);
  auto timer = std::make_shared<asio::steady_timer>(ioc);
  timer->expires_after(cfg_.handshake_timeout);
  timer->async_wait([resolver, sock](boost::system::error_code ec) {
    if (ec)
      return;
    resolver->cancel();
    boost::system::error_code ignored;
    sock->close(ignored);
  });
  auto failed = [waiter, address](const std::string& what) {
    waiter->finish(
      {nullptr,
       caf::make_error(errc::connect_failed,
                       "cannot connect to " + address + ": " + what),
       0});
  };
  resolver->async_resolve(
    host, std::to_string(port),
    [this, resolver, sock, timer, waiter, address,
     failed](boost::system::error_code ec,
             asio::ip::tcp::resolver::results_type found) {
      if (ec) {
        timer->cancel();
        failed(ec == asio::error::operation_aborted
                 ? std::string{"resolving the host took too long"}
                 : "cannot resolve the host (" + ec.message() + ")");
        return;
      }
      asio::async_connect(
        *sock, found,
        [this, sock, timer, waiter, address,
         failed](boost::system::error_code ec, const asio::ip::tcp::endpoint&) {
          timer->cancel();
          if (ec) {
            failed(ec == asio::error::operation_aborted
                     ? std::string{"no answer within the handshake timeout"}
                     : ec.message());
            return;
          }
          auto h = std::make_shared<handshake>(*this, address, waiter);
          auto conn = net::connection::make(
            std::move(*sock), false, streams(false, address), timing(), h,
            std::make_shared<connection_token>(open_connections_));
          conn->start();
        });
    });
}

} // namespace ferry::detail
