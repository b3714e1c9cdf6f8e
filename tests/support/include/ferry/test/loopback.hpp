// A TCP connection to a port of 127.0.0.1, for tests and their helper
// programs that speak to a node's socket themselves (a raw peer, a relay).
// Header only, so programs that link no test library use it too.
//
// Thread-safety: a pure function.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace ferry::test {

/// Returns a socket connected to 127.0.0.1:`port` (close-on-exec), or -1.
inline int connect_loopback(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

} // namespace ferry::test
