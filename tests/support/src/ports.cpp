// Ports for tests: see ferry/test/ports.hpp.
#include "ferry/test/ports.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ferry::test {

port_block::port_block(size_t k) {
  for (size_t i = 0; i < k; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0
        || ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      if (fd >= 0)
        ::close(fd);
      ports_.push_back(0); // a node given port 0 fails to start, loudly
      continue;
    }
    fds_.push_back(fd);
    ports_.push_back(ntohs(addr.sin_port));
  }
}

port_block::~port_block() {
  release();
}

void port_block::release() {
  for (auto fd : fds_)
    ::close(fd);
  fds_.clear();
}

uint16_t free_port() {
  return port_block{1}[0];
}

} // namespace ferry::test
