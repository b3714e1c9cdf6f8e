// tls_bio: OpenSSL's socket BIO with SIGPIPE-free, non-blocking reads and
// writes (see transport/tls_bio.hpp).
#include "transport/tls_bio.hpp"

#include <openssl/bio.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <cerrno>
#include <climits>

namespace ferry::detail::net {

namespace {

int socket_of(BIO* bio) {
  int fd = -1;
  BIO_get_fd(bio, &fd);
  return fd;
}

/// What the last `read_socket` on this thread saw (`take_socket_read`).
thread_local socket_read last_read = socket_read::none;

int read_socket(BIO* bio, char* out, int size) {
  BIO_clear_retry_flags(bio);
  last_read = socket_read::more;
  if (out == nullptr || size <= 0)
    return 0;
  for (;;) {
    auto n =
      ::recv(socket_of(bio), out, static_cast<size_t>(size), MSG_DONTWAIT);
    if (n > 0) {
      last_read = n < size ? socket_read::drained : socket_read::more;
      return static_cast<int>(n);
    }
    if (n == 0) {
      // What OpenSSL's own socket BIO sets: libssl asks BIO_eof to tell an
      // EOF from a close_notify.
      BIO_set_flags(bio, BIO_FLAGS_IN_EOF);
      return 0;
    }
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      BIO_set_retry_read(bio);
      last_read = socket_read::drained;
    }
    return -1;
  }
}

int write_socket(BIO* bio, const char* in, int size) {
  BIO_clear_retry_flags(bio);
  if (in == nullptr || size <= 0)
    return 0;
  for (;;) {
    auto n = ::send(socket_of(bio), in, static_cast<size_t>(size),
                    MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0)
      return static_cast<int>(n);
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      BIO_set_retry_write(bio);
    return -1;
  }
}

int puts_socket(BIO* bio, const char* text) {
  size_t size = 0;
  while (text[size] != '\0')
    ++size;
  return size > INT_MAX ? -1 : write_socket(bio, text, static_cast<int>(size));
}

/// The socket BIO's controls for the descriptor, close flag, flush and EOF;
/// everything else (kTLS above all) is declined.
long control_socket(BIO* bio, int cmd, long num, void* ptr) {
  static auto* forward = BIO_meth_get_ctrl(BIO_s_socket());
  switch (cmd) {
  case BIO_C_SET_FD:
  case BIO_C_GET_FD:
  case BIO_CTRL_GET_CLOSE:
  case BIO_CTRL_SET_CLOSE:
  case BIO_CTRL_DUP:
  case BIO_CTRL_FLUSH:
  case BIO_CTRL_EOF:
    return forward(bio, cmd, num, ptr);
  default:
    return 0;
  }
}

BIO_METHOD* make_method() {
  auto type = BIO_get_new_index();
  if (type == -1)
    return nullptr;
  auto* result = BIO_meth_new(type | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
                              "ferry socket");
  if (result == nullptr)
    return nullptr;
  const auto* socket = BIO_s_socket();
  if (BIO_meth_set_read(result, read_socket) != 1 ||
      BIO_meth_set_write(result, write_socket) != 1 ||
      BIO_meth_set_puts(result, puts_socket) != 1 ||
      BIO_meth_set_ctrl(result, control_socket) != 1 ||
      BIO_meth_set_create(result, BIO_meth_get_create(socket)) != 1 ||
      BIO_meth_set_destroy(result, BIO_meth_get_destroy(socket)) != 1) {
    BIO_meth_free(result);
    return nullptr;
  }
  return result;
}

/// Returns a new socket BIO (one reference) on `fd`, or null.
BIO* make_socket_bio(int fd) {
  // Made once and kept for the process: every BIO refers to it.
  static BIO_METHOD* method = make_method();
  if (method == nullptr)
    return nullptr;
  auto* result = BIO_new(method);
  if (result == nullptr)
    return nullptr;
  BIO_set_fd(result, fd, BIO_NOCLOSE);
  return result;
}

} // namespace

socket_read take_socket_read() noexcept {
  auto result = last_read;
  last_read = socket_read::none;
  return result;
}

bool attach_socket(SSL* ssl, int fd) {
  auto* socket = make_socket_bio(fd);
  auto* buffer = BIO_new(BIO_f_buffer());
  if (socket == nullptr || buffer == nullptr ||
      BIO_set_write_buffer_size(buffer, write_buffer_size) != 1 ||
      BIO_up_ref(socket) != 1) {
    BIO_free(buffer);
    BIO_free(socket);
    return false;
  }
  // The SSL owns a reference to each: the socket as its read BIO, and the
  // chain (buffer, then socket) as its write BIO.
  BIO_push(buffer, socket);
  SSL_set_bio(ssl, socket, buffer);
  return true;
}

} // namespace ferry::detail::net
