// plain_stream: reading and writing a socket (see transport/plain_stream.hpp).
#include "transport/plain_stream.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include <sys/socket.h>
#include <sys/uio.h>

namespace ferry::detail::net {

stream::~stream() = default;

namespace {

io_result failure(const char* what, int err) {
  io_result result;
  result.state = io_result::status::failed;
  result.error = std::string{what} + ": " + std::strerror(err);
  result.sys_error = err;
  return result;
}

} // namespace

io_result plain_stream::handshake() {
  return {};
}

io_result plain_stream::read(std::span<std::byte> out) {
  io_result result;
  if (drained_) {
    drained_ = false;
    result.state = io_result::status::want_read;
    return result;
  }
  for (;;) {
    auto n = ::recv(fd_, out.data(), out.size(), MSG_DONTWAIT);
    if (n > 0) {
      result.bytes = static_cast<size_t>(n);
      // Less than asked: the socket held no more (stream.hpp).
      drained_ = result.bytes < out.size();
      return result;
    }
    if (n == 0) {
      result.state = io_result::status::closed;
      return result;
    }
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      result.state = io_result::status::want_read;
      return result;
    }
    return failure("reading the socket", errno);
  }
}

io_result plain_stream::write(std::span<const piece> pieces) {
  io_result result;
  // Pieces of one call at most (the kernel's limit for sendmsg).
  constexpr size_t max_pieces = IOV_MAX < 1024 ? IOV_MAX : 1024;
  iovec vec[max_pieces];
  while (!pieces.empty()) {
    size_t count = 0;
    size_t wanted = 0;
    for (auto& x : pieces) {
      if (count == max_pieces)
        break;
      if (x.empty())
        continue;
      vec[count].iov_base = const_cast<std::byte*>(x.data());
      vec[count].iov_len = x.size();
      wanted += x.size();
      ++count;
    }
    if (count == 0)
      return result;
    msghdr msg{};
    msg.msg_iov = vec;
    msg.msg_iovlen = count;
    auto n = ::sendmsg(fd_, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        result.state = io_result::status::want_write;
        return result;
      }
      return failure("writing the socket", errno);
    }
    auto written = static_cast<size_t>(n);
    result.bytes += written;
    // Step over what went out, whole pieces first.
    while (!pieces.empty() && written >= pieces.front().size()) {
      written -= pieces.front().size();
      pieces = pieces.subspan(1);
    }
    if (written > 0 || static_cast<size_t>(n) < wanted) {
      // The socket took part of a piece (or stopped short): it is full.
      result.state = io_result::status::want_write;
      return result;
    }
  }
  return result;
}

void plain_stream::shutdown() noexcept {
  ::shutdown(fd_, SHUT_WR);
}

} // namespace ferry::detail::net
