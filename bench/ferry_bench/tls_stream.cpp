// TLS over a blocking TCP socket (see tls_stream.hpp).
#include "tls_stream.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ferry::bench {

namespace {

/// Bytes one SSL_write takes at most.
constexpr size_t max_write = 256 * 1024;

/// Pieces of a message smaller than this together go out in one SSL_write.
constexpr size_t coalesce_limit = 64 * 1024;

/// Empties this thread's OpenSSL error queue and returns its entries as
/// text ("" when empty).
std::string openssl_errors() {
  std::string out;
  while (auto code = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    out += out.empty() ? "" : "; ";
    out += buf;
  }
  return out;
}

/// Why an SSL call returned `rc`.
std::string ssl_failure(SSL* ssl, int rc, const char* what) {
  auto code = SSL_get_error(ssl, rc);
  auto text = openssl_errors();
  if (code == SSL_ERROR_ZERO_RETURN)
    return std::string{what} + ": the peer closed the connection";
  if (code == SSL_ERROR_SYSCALL && text.empty())
    return errno == 0 ? std::string{what} + ": the connection was closed"
                      : errno_text(what);
  return std::string{what} + " failed (SSL error " + std::to_string(code)
         + (text.empty() ? ")" : "): " + text);
}

class tls_stream final : public byte_stream {
public:
  tls_stream(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {
    staging_.reserve(coalesce_limit);
  }

  ~tls_stream() override {
    SSL_free(ssl_);
    ::close(fd_);
  }

  size_t read_some(void* buf, size_t size) override {
    auto n = SSL_read(ssl_, buf, static_cast<int>(std::min<size_t>(size,
                                                                   INT_MAX)));
    if (n > 0)
      return static_cast<size_t>(n);
    error_ = ssl_failure(ssl_, n, "SSL_read");
    return 0;
  }

  bool write_all(iovec* iov, int count) override {
    size_t total = 0;
    for (int i = 0; i < count; ++i)
      total += iov[i].iov_len;
    if (count > 1 && total <= coalesce_limit) {
      staging_.clear();
      for (int i = 0; i < count; ++i) {
        auto* pos = static_cast<const char*>(iov[i].iov_base);
        staging_.insert(staging_.end(), pos, pos + iov[i].iov_len);
      }
      return write_bytes(staging_.data(), staging_.size());
    }
    for (int i = 0; i < count; ++i)
      if (!write_bytes(static_cast<const char*>(iov[i].iov_base),
                       iov[i].iov_len))
        return false;
    return true;
  }

  int wait_readable(std::chrono::milliseconds wait) override {
    // Bytes OpenSSL already holds (a decrypted record, or what read-ahead
    // took from the socket) show up in no poll.
    if (SSL_pending(ssl_) > 0 || SSL_has_pending(ssl_) == 1)
      return 1;
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
  bool write_bytes(const char* pos, size_t size) {
    while (size > 0) {
      auto n = SSL_write(ssl_, pos, static_cast<int>(std::min(size,
                                                              max_write)));
      if (n <= 0) {
        error_ = ssl_failure(ssl_, n, "SSL_write");
        return false;
      }
      pos += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  int fd_;
  SSL* ssl_;
  std::vector<char> staging_;
};

} // namespace

tls_context::tls_context(role r, const tls_credentials& files) : role_(r) {
  ctx_ = SSL_CTX_new(r == role::client ? TLS_client_method()
                                       : TLS_server_method());
  if (ctx_ == nullptr)
    throw std::runtime_error("SSL_CTX_new: " + openssl_errors());
  auto fail = [this](const std::string& what) {
    auto why = what + ": " + openssl_errors();
    SSL_CTX_free(ctx_);
    throw std::runtime_error(why);
  };
  if (SSL_CTX_set_min_proto_version(ctx_, TLS1_3_VERSION) != 1)
    fail("cannot require TLS 1.3");
  // The suites in the order ferry's links prefer them
  // (framework/src/transport/tls_context.cpp), so that this row and ferry's
  // tls rows run the same cipher (OpenSSL's own default prefers
  // AES-256-GCM, which costs more per byte).
  if (SSL_CTX_set_ciphersuites(ctx_, "TLS_AES_128_GCM_SHA256:"
                                     "TLS_AES_256_GCM_SHA384:"
                                     "TLS_CHACHA20_POLY1305_SHA256")
      != 1)
    fail("cannot set the TLS 1.3 suites");
  if (r == role::server)
    SSL_CTX_set_options(ctx_, SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_use_certificate_chain_file(ctx_, files.certificate.c_str())
      != 1)
    fail("certificate " + files.certificate);
  if (SSL_CTX_use_PrivateKey_file(ctx_, files.key.c_str(), SSL_FILETYPE_PEM)
        != 1
      || SSL_CTX_check_private_key(ctx_) != 1)
    fail("key " + files.key);
  if (SSL_CTX_load_verify_locations(ctx_, files.ca_file.c_str(), nullptr)
      != 1)
    fail("CA file " + files.ca_file);
  SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                     nullptr);
  SSL_CTX_set_read_ahead(ctx_, 1);
  if (r == role::server)
    SSL_CTX_set_num_tickets(ctx_, 0);
}

tls_context::~tls_context() {
  SSL_CTX_free(ctx_);
}

tls_connection tls_context::handshake(int fd,
                                      const std::string& peer_name) const {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr)
    throw std::runtime_error("SSL_new: " + openssl_errors());
  auto fail = [ssl](const std::string& why) {
    SSL_free(ssl); // its socket BIO leaves the socket open
    throw std::runtime_error(why);
  };
  if (SSL_set_fd(ssl, fd) != 1)
    fail("SSL_set_fd: " + openssl_errors());
  if (role_ == role::client && !peer_name.empty()
      && SSL_set1_host(ssl, peer_name.c_str()) != 1)
    fail("SSL_set1_host: " + openssl_errors());
  auto rc = role_ == role::client ? SSL_connect(ssl) : SSL_accept(ssl);
  if (rc != 1)
    fail(ssl_failure(ssl, rc, role_ == role::client ? "TLS handshake (client)"
                                                    : "TLS handshake (server)"));
  tls_connection result;
  result.session = std::string{SSL_get_version(ssl)} + " "
                   + SSL_CIPHER_get_name(SSL_get_current_cipher(ssl));
  result.stream = std::make_unique<tls_stream>(fd, ssl);
  return result;
}

} // namespace ferry::bench
