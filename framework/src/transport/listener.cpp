// listener: accepting connections (see transport/listener.hpp).
#include "transport/listener.hpp"

#include "ferry/errc.hpp"

#include <boost/asio/post.hpp>

#include <chrono>

namespace ferry::detail::net {

namespace asio = boost::asio;

listener::listener(asio::io_context& ioc,
                   std::function<asio::io_context&()> pick, accept_fn on_accept,
                   log_fn log)
  : acceptor_(ioc),
    pause_(ioc),
    pick_(std::move(pick)),
    on_accept_(std::move(on_accept)),
    log_(std::move(log)) {
  // nop
}

caf::expected<std::shared_ptr<listener>>
listener::open(asio::io_context& ioc, const std::string& address, uint16_t port,
               std::function<asio::io_context&()> pick, accept_fn on_accept,
               log_fn log) {
  std::shared_ptr<listener> result{
    new listener(ioc, std::move(pick), std::move(on_accept), std::move(log))};
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(address.empty() ? "0.0.0.0" : address, ec);
  if (ec)
    return caf::make_error(errc::connect_failed,
                           "cannot listen on \"" + address +
                             "\": not an IP address (" + ec.message() + ")");
  asio::ip::tcp::endpoint ep{addr, port};
  auto& a = result->acceptor_;
  if (a.open(ep.protocol(), ec); !ec)
    if (a.set_option(asio::socket_base::reuse_address{true}, ec); !ec)
      if (a.bind(ep, ec); !ec)
        a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return caf::make_error(errc::connect_failed, "cannot listen on " + address +
                                                   ":" + std::to_string(port) +
                                                   ": " + ec.message());
  result->port_ = a.local_endpoint(ec).port();
  asio::post(ioc, [self = result] { self->accept(); });
  return result;
}

void listener::accept() {
  acceptor_.async_accept(
    pick_(), [self = shared_from_this()](boost::system::error_code ec,
                                         asio::ip::tcp::socket sock) {
      if (ec == asio::error::operation_aborted || !self->acceptor_.is_open())
        return;
      if (ec) {
        // Out of descriptors or memory: the peers' connections wait in the
        // backlog meanwhile.
        if (!self->reported_ && self->log_)
          self->log_("cannot accept a connection on port " +
                     std::to_string(self->port_) + ": " + ec.message() +
                     "; trying again every 100 ms");
        self->reported_ = true;
        self->pause_.expires_after(std::chrono::milliseconds{100});
        self->pause_.async_wait([self](boost::system::error_code e) {
          if (!e)
            self->accept();
        });
        return;
      }
      self->reported_ = false;
      self->on_accept_(std::move(sock));
      self->accept();
    });
}

void listener::close() {
  asio::post(acceptor_.get_executor(), [self = shared_from_this()] {
    boost::system::error_code ec;
    self->pause_.cancel();
    self->acceptor_.close(ec);
  });
}

} // namespace ferry::detail::net
