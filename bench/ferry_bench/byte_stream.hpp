// A connected, blocking byte stream between two processes, and the TCP
// sockets under it, for the limit rows (limit_runs.cpp).
//
// A `byte_stream` reads, writes and waits for bytes; the frames of the
// limit rows (frame_protocol.hpp) go over any of them: a plain TCP socket
// (`make_tcp_stream`, the `socket` row) or TLS over one (tls_stream.hpp,
// the `tls-socket` row). A stream owns its socket and closes it when it
// goes. Not thread-safe: one thread reads and writes; another may only call
// `shutdown`, which ends a blocked read or write on the first.
//
// `connect_tcp` and `tcp_listener` make the loopback (or emulated host's)
// connections, TCP_NODELAY on both ends.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <sys/uio.h>

namespace ferry::bench {

class byte_stream {
public:
  virtual ~byte_stream() = default;

  /// Reads at least one and at most `size` bytes into `buf`, blocking until
  /// some arrive; returns how many, or 0 at the end of the stream or on
  /// failure (then `error()` says which).
  virtual size_t read_some(void* buf, size_t size) = 0;

  /// Writes every byte of the `count` pieces of `iov` (blocking; `iov` may
  /// be changed); false on failure.
  virtual bool write_all(iovec* iov, int count) = 0;

  /// Waits up to `wait` for bytes to read: 1 when there are some, 0 when
  /// none came, -1 on failure.
  virtual int wait_readable(std::chrono::milliseconds wait) = 0;

  /// Shuts the socket down both ways (any thread): a read or write blocked
  /// on it returns.
  virtual void shutdown() = 0;

  /// Returns why the last call failed.
  const std::string& error() const { return error_; }

protected:
  std::string error_;
};

/// Reads exactly `size` bytes; false on failure or at the end of the stream.
bool read_all(byte_stream& in, void* buf, size_t size);

/// Returns "<what>: <strerror(errno)>".
std::string errno_text(const char* what);

/// Returns the plain stream over the connected TCP socket `fd` (owned).
std::unique_ptr<byte_stream> make_tcp_stream(int fd);

/// Connects to `address`:`port` (IPv4), TCP_NODELAY on; returns the socket.
/// Throws std::runtime_error when it cannot.
int connect_tcp(const std::string& address, uint16_t port);

/// A listening TCP socket on an IPv4 address, port chosen by the kernel.
class tcp_listener {
public:
  /// Listens on `address`; throws std::runtime_error when it cannot.
  explicit tcp_listener(const std::string& address);

  tcp_listener(const tcp_listener&) = delete;
  tcp_listener& operator=(const tcp_listener&) = delete;

  ~tcp_listener();

  /// Returns the port it listens on.
  uint16_t port() const { return port_; }

  /// Waits for one connection and returns its socket (TCP_NODELAY on), or
  /// -1 after `shutdown` or on failure.
  int accept();

  /// Ends a blocked `accept` (any thread).
  void shutdown();

private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

} // namespace ferry::bench
