// tls_bio: the BIOs between an SSL and its socket: OpenSSL's socket BIO
// reading with recv, and a buffer of ferry's own writing with send, both
// SIGPIPE-free and non-blocking (see transport/tls_bio.hpp).
#include "transport/tls_bio.hpp"

#include <openssl/bio.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <new>

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

/// Sends `size` bytes at `data` to `fd` without waiting: the bytes sent,
/// or -1 with errno set.
long send_some(int fd, const char* data, size_t size) {
  for (;;) {
    auto n = ::send(fd, data, size, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0 || errno != EINTR)
      return n;
  }
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

/// The reading BIO's method: OpenSSL's socket BIO with `read_socket`.
BIO_METHOD* make_read_method() {
  auto type = BIO_get_new_index();
  if (type == -1)
    return nullptr;
  auto* result = BIO_meth_new(type | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
                              "ferry socket reader");
  if (result == nullptr)
    return nullptr;
  const auto* socket = BIO_s_socket();
  if (BIO_meth_set_read(result, read_socket) != 1 ||
      BIO_meth_set_ctrl(result, control_socket) != 1 ||
      BIO_meth_set_create(result, BIO_meth_get_create(socket)) != 1 ||
      BIO_meth_set_destroy(result, BIO_meth_get_destroy(socket)) != 1) {
    BIO_meth_free(result);
    return nullptr;
  }
  return result;
}

// -- the writing BIO ----------------------------------------------------------

/// A writing BIO's state: the socket and the records not sent yet, at
/// [begin, end) of `data`.
struct write_buffer {
  int fd = -1;
  std::unique_ptr<char[]> data = std::make_unique<char[]>(write_buffer_size);
  size_t begin = 0;
  size_t end = 0;
};

write_buffer& buffer_of(BIO* bio) {
  return *static_cast<write_buffer*>(BIO_get_data(bio));
}

/// Sends what `buf` holds as far as the socket takes it: 1 when all of it
/// went, else 0 with the BIO's retry flag set (the socket is full) or -1
/// with errno set (the socket failed).
int send_buffered(BIO* bio, write_buffer& buf) {
  while (buf.begin < buf.end) {
    auto n = send_some(buf.fd, buf.data.get() + buf.begin, buf.end - buf.begin);
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        return -1;
      BIO_set_retry_write(bio);
      return 0;
    }
    buf.begin += static_cast<size_t>(n);
  }
  buf.begin = 0;
  buf.end = 0;
  return 1;
}

int write_buffered(BIO* bio, const char* in, int size) {
  BIO_clear_retry_flags(bio);
  if (in == nullptr || size <= 0)
    return 0;
  auto& buf = buffer_of(bio);
  auto wanted = static_cast<size_t>(size);
  if (write_buffer_size - buf.end < wanted && buf.begin < buf.end) {
    if (send_buffered(bio, buf) < 0)
      return -1;
    BIO_clear_retry_flags(bio);
  }
  if (buf.begin > 0) {
    std::memmove(buf.data.get(), buf.data.get() + buf.begin,
                 buf.end - buf.begin);
    buf.end -= buf.begin;
    buf.begin = 0;
  }
  auto n = std::min(wanted, write_buffer_size - buf.end);
  if (n == 0) {
    BIO_set_retry_write(bio);
    return -1;
  }
  std::memcpy(buf.data.get() + buf.end, in, n);
  buf.end += n;
  return static_cast<int>(n);
}

int puts_buffered(BIO* bio, const char* text) {
  auto size = std::strlen(text);
  return size > INT_MAX ? -1
                        : write_buffered(bio, text, static_cast<int>(size));
}

long control_buffered(BIO* bio, int cmd, long, void*) {
  auto& buf = buffer_of(bio);
  switch (cmd) {
  case BIO_CTRL_FLUSH:
    BIO_clear_retry_flags(bio);
    return send_buffered(bio, buf) == 1 ? 1 : -1;
  case BIO_CTRL_WPENDING:
    return static_cast<long>(buf.end - buf.begin);
  case BIO_CTRL_GET_CLOSE:
  case BIO_CTRL_SET_CLOSE:
    return 1;
  default:
    return 0;
  }
}

int create_buffered(BIO* bio) {
  auto* buf = new (std::nothrow) write_buffer;
  if (buf == nullptr)
    return 0;
  BIO_set_data(bio, buf);
  BIO_set_init(bio, 1);
  return 1;
}

int destroy_buffered(BIO* bio) {
  delete static_cast<write_buffer*>(BIO_get_data(bio));
  BIO_set_data(bio, nullptr);
  return 1;
}

/// The writing BIO's method.
BIO_METHOD* make_write_method() {
  auto type = BIO_get_new_index();
  if (type == -1)
    return nullptr;
  auto* result =
    BIO_meth_new(type | BIO_TYPE_SOURCE_SINK, "ferry buffered socket writer");
  if (result == nullptr)
    return nullptr;
  if (BIO_meth_set_write(result, write_buffered) != 1 ||
      BIO_meth_set_puts(result, puts_buffered) != 1 ||
      BIO_meth_set_ctrl(result, control_buffered) != 1 ||
      BIO_meth_set_create(result, create_buffered) != 1 ||
      BIO_meth_set_destroy(result, destroy_buffered) != 1) {
    BIO_meth_free(result);
    return nullptr;
  }
  return result;
}

/// Returns a new reading BIO on `fd`, or null.
BIO* make_reader(int fd) {
  // Made once and kept for the process: every BIO refers to it.
  static BIO_METHOD* method = make_read_method();
  if (method == nullptr)
    return nullptr;
  auto* result = BIO_new(method);
  if (result == nullptr)
    return nullptr;
  BIO_set_fd(result, fd, BIO_NOCLOSE);
  return result;
}

/// Returns a new writing BIO on `fd`, or null.
BIO* make_writer(int fd) {
  static BIO_METHOD* method = make_write_method();
  if (method == nullptr)
    return nullptr;
  auto* result = BIO_new(method);
  if (result == nullptr)
    return nullptr;
  buffer_of(result).fd = fd;
  return result;
}

} // namespace

socket_read take_socket_read() noexcept {
  auto result = last_read;
  last_read = socket_read::none;
  return result;
}

bool attach_socket(SSL* ssl, int fd) {
  auto* reader = make_reader(fd);
  auto* writer = make_writer(fd);
  if (reader == nullptr || writer == nullptr) {
    BIO_free(reader);
    BIO_free(writer);
    return false;
  }
  // The SSL owns both.
  SSL_set_bio(ssl, reader, writer);
  return true;
}

} // namespace ferry::detail::net
