// A test's side of one HTTP exchange over loopback: writes a request as
// given (well-formed or not) and returns every byte the server sends until
// it closes the connection. Blocking, with a 10 s receive timeout; one
// connection per call, so any thread may call it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace ferry::test {

/// Sends `request` to 127.0.0.1:`port` and returns the whole answer ("" if
/// the connection failed).
inline std::string exchange(uint16_t port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return {};
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0
      && send(fd, request.data(), request.size(), MSG_NOSIGNAL)
           == static_cast<ssize_t>(request.size())) {
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;)
      answer.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return answer;
}

} // namespace ferry::test
