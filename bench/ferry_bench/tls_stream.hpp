// TLS over a blocking TCP socket with OpenSSL, as any OpenSSL user writes
// it: the byte stream of the `tls-socket` limit row (limit_runs.cpp).
//
// A `tls_context` is one end's SSL_CTX: TLS 1.3 only, its certificate and
// key from the test PKI (test_pki.hpp), the other end's certificate checked
// against the CA on both ends (mutual authentication, as ferry's tls rows),
// read-ahead on (OpenSSL fills its read buffer with one read instead of
// reading each record's header and body apart); the server sends no session
// tickets (the row makes one connection, and a ticket would arrive while
// the client waits for an acknowledgement). Cipher suites are OpenSSL's
// defaults; the driver's progress line names the one the ends agreed on.
//
// The stream writes with `SSL_write` in pieces of at most 256 KiB, a
// message's small pieces (at most 64 KiB together) first copied into one
// buffer so that they make one write, and reads with `SSL_read` into the
// caller's buffer. It owns the socket and the SSL object. Thread-safety as
// byte_stream.hpp says: one thread reads and writes.
#pragma once

#include "byte_stream.hpp"
#include "test_pki.hpp"

#include <memory>
#include <string>

using SSL_CTX = struct ssl_ctx_st;

namespace ferry::bench {

/// A connection after its handshake.
struct tls_connection {
  std::unique_ptr<byte_stream> stream;
  /// The protocol and cipher suite, e.g. "TLSv1.3 TLS_AES_256_GCM_SHA384".
  std::string session;
};

class tls_context {
public:
  enum class role { client, server };

  /// Makes the context of one end; throws std::runtime_error naming the
  /// file or setting OpenSSL refused.
  tls_context(role r, const tls_credentials& files);

  tls_context(const tls_context&) = delete;
  tls_context& operator=(const tls_context&) = delete;

  ~tls_context();

  /// Runs the handshake over the connected socket `fd` and returns the
  /// stream, which owns `fd` from then on. A client checks that the
  /// server's certificate names `peer_name`. Throws std::runtime_error when
  /// the handshake fails; `fd` then stays the caller's.
  tls_connection handshake(int fd, const std::string& peer_name = {}) const;

private:
  role role_;
  SSL_CTX* ctx_ = nullptr;
};

} // namespace ferry::bench
