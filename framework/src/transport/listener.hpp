// listener: a node's listening socket.
//
// A listener accepts TCP connections on one address and port and hands
// each accepted socket to `on_accept` (on the listener's I/O thread), which
// makes it a connection. It never stops on a failed accept: when the
// process is out of file descriptors (or the kernel of memory) it reports
// the failure once and tries again after a pause, so a peer opening
// connections without end cannot end the listening.
//
// Thread-safety: `open` and `close` may be called from any thread; the
// accept loop runs on the listener's I/O thread.
#pragma once

#include <caf/expected.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace ferry::detail::net {

class listener : public std::enable_shared_from_this<listener> {
public:
  using accept_fn = std::function<void(boost::asio::ip::tcp::socket)>;
  using log_fn = std::function<void(const std::string&)>;

  /// Listens on `address`:`port` (0: a free port) and starts accepting;
  /// `on_accept` gets each connection's socket, bound to an I/O context
  /// from `pick` (the node's next I/O thread).
  [[nodiscard]] static caf::expected<std::shared_ptr<listener>>
  open(boost::asio::io_context& ioc, const std::string& address, uint16_t port,
       std::function<boost::asio::io_context&()> pick, accept_fn on_accept,
       log_fn log);

  /// Returns the port listened on.
  uint16_t port() const noexcept { return port_; }

  /// Stops accepting and closes the socket.
  void close();

private:
  listener(boost::asio::io_context& ioc,
           std::function<boost::asio::io_context&()> pick, accept_fn on_accept,
           log_fn log);

  void accept();

  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer pause_;
  std::function<boost::asio::io_context&()> pick_;
  accept_fn on_accept_;
  log_fn log_;
  uint16_t port_ = 0;
  bool reported_ = false;
};

} // namespace ferry::detail::net
