// The plain TCP stream and the sockets of the limit rows (see
// byte_stream.hpp).
#include "byte_stream.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ferry::bench {

namespace {

void set_nodelay(int fd) {
  int on = 1;
  static_cast<void>(
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)));
}

sockaddr_in ipv4(const std::string& address, uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1)
    throw std::runtime_error("not an IPv4 address: " + address);
  return addr;
}

/// A plain TCP socket: reads with read, writes with writev.
class tcp_stream final : public byte_stream {
public:
  explicit tcp_stream(int fd) : fd_(fd) {
    // nop
  }

  ~tcp_stream() override { ::close(fd_); }

  size_t read_some(void* buf, size_t size) override {
    for (;;) {
      auto n = ::read(fd_, buf, size);
      if (n > 0)
        return static_cast<size_t>(n);
      if (n < 0 && errno == EINTR)
        continue;
      error_ = n == 0 ? std::string{"the connection was closed"}
                      : errno_text("read");
      return 0;
    }
  }

  bool write_all(iovec* iov, int count) override {
    while (count > 0) {
      auto n = ::writev(fd_, iov, count);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        error_ = errno_text("writev");
        return false;
      }
      auto left = static_cast<size_t>(n);
      while (count > 0 && left >= iov->iov_len) {
        left -= iov->iov_len;
        ++iov;
        --count;
      }
      if (count > 0) {
        iov->iov_base = static_cast<char*>(iov->iov_base) + left;
        iov->iov_len -= left;
      }
    }
    return true;
  }

  int wait_readable(std::chrono::milliseconds wait) override {
    pollfd pfd{fd_, POLLIN, 0};
    for (;;) {
      auto n = ::poll(&pfd, 1, static_cast<int>(wait.count()));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        error_ = errno_text("poll");
      return n < 0 ? -1 : (n > 0 ? 1 : 0);
    }
  }

  void shutdown() override { ::shutdown(fd_, SHUT_RDWR); }

private:
  int fd_;
};

} // namespace

bool read_all(byte_stream& in, void* buf, size_t size) {
  auto* pos = static_cast<char*>(buf);
  while (size > 0) {
    auto n = in.read_some(pos, size);
    if (n == 0)
      return false;
    pos += n;
    size -= n;
  }
  return true;
}

std::string errno_text(const char* what) {
  return std::string{what} + ": " + std::strerror(errno);
}

std::unique_ptr<byte_stream> make_tcp_stream(int fd) {
  return std::make_unique<tcp_stream>(fd);
}

int connect_tcp(const std::string& address, uint16_t port) {
  auto addr = ipv4(address, port);
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    throw std::runtime_error(errno_text("socket"));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    auto why = errno_text("connect");
    ::close(fd);
    throw std::runtime_error(why + " (" + address + ":"
                             + std::to_string(port) + ")");
  }
  set_nodelay(fd);
  return fd;
}

tcp_listener::tcp_listener(const std::string& address) {
  auto addr = ipv4(address, 0);
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0)
    throw std::runtime_error(errno_text("socket"));
  socklen_t len = sizeof(addr);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0
      || ::listen(fd_, 1) != 0
      || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    auto why = errno_text("listen");
    ::close(fd_);
    throw std::runtime_error(why);
  }
  port_ = ntohs(addr.sin_port);
}

tcp_listener::~tcp_listener() {
  ::close(fd_);
}

int tcp_listener::accept() {
  int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0)
    set_nodelay(fd);
  return fd;
}

void tcp_listener::shutdown() {
  ::shutdown(fd_, SHUT_RDWR);
}

} // namespace ferry::bench
