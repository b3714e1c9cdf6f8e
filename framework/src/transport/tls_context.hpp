// tls_context: a TLS node's credentials and its one OpenSSL context, made
// once when the node starts; it makes the TLS stream of each connection.
//
// `make` checks the options before anything listens or connects: all of
// certificate, key and CA file are set (or no option at all: a plain node,
// and `make` returns null), each file is readable PEM, the key decrypts
// with the passphrase (a callback that never prompts), the key belongs to
// the certificate, and the CA file holds certificates. Each failure is an
// `errc::invalid_config` naming the option, the file, what is wrong and how
// to fix it. What merely makes peers refuse this node (its certificate does
// not name the node, is expired or not yet valid, or does not chain to its
// own CA file) becomes a line of `warnings()` for the node's log.
//
// The certificate and key are read and decrypted here, once; connections
// share the resulting `SSL_CTX`, set up for mutual authentication (both
// sides present a certificate that must chain to the CA file), TLS 1.2 at
// least (1.3 preferred, AEAD ciphers with forward secrecy only), no
// renegotiation, no session tickets or resumption (nothing is sent after
// the handshake but application data and alerts), and large reads (read
// ahead into a 64 KiB buffer, so one `recv` takes several records). A peer's
// certificate is checked against the CA file, not against a host name: the
// connection checks the name a peer claims with `tls_stream::check_name`.
//
// Usage:
//
//     tls_options opts{"alpha.pem", "alpha.key", "ca.pem", "", "alpha"};
//     auto ctx = tls_context::make(opts);       // once per node
//     if (!ctx) return std::move(ctx.error());  // invalid_config
//     for (auto& line : (*ctx)->warnings()) log(line);
//     ...                                       // null *ctx: a plain node
//     auto s = (*ctx)->make_stream(fd, true);   // per accepted socket
//     if (s) (*s)->handshake();                 // want_read: wait, again
//
// Thread-safety: immutable after `make`; `make_stream` and the getters may
// be called from any thread at once (OpenSSL locks the shared SSL_CTX).
#pragma once

#include <caf/expected.hpp>

#include <openssl/ossl_typ.h>

#include <memory>
#include <string>
#include <vector>

#include "transport/tls_stream.hpp"

namespace ferry::detail::net {

/// A node's TLS options, as `ferry.tls.*` sets them.
struct tls_options {
  /// PEM certificate (chain) of this node (`ferry.tls.certificate`).
  std::string certificate;
  /// PEM private key of `certificate` (`ferry.tls.key`).
  std::string key;
  /// PEM certificates of the CAs this node trusts (`ferry.tls.ca-file`).
  std::string ca_file;
  /// Passphrase of an encrypted `key` (`ferry.tls.passphrase`).
  std::string passphrase;
  /// This node's name, which its certificate should carry.
  std::string node_name;

  /// Returns whether any TLS option is set (a passphrase alone counts: a
  /// node never falls back to plain links by omission).
  bool enabled() const noexcept {
    return !certificate.empty() || !key.empty() || !ca_file.empty() ||
           !passphrase.empty();
  }
};

class tls_context {
public:
  ~tls_context();

  tls_context(const tls_context&) = delete;
  tls_context& operator=(const tls_context&) = delete;

  /// Checks `opts` and makes the context; returns null when no TLS option
  /// is set (a plain node), `errc::invalid_config` when the options are
  /// incomplete or a file is unreadable, not PEM, or does not fit.
  [[nodiscard]] static caf::expected<std::shared_ptr<const tls_context>>
  make(const tls_options& opts);

  /// Returns a stream over the connected non-blocking socket `fd` (not
  /// owned: the caller closes it after the stream is gone), accepting
  /// (`server`) or connecting; `errc::handshake_failed` when OpenSSL cannot
  /// make a session (out of memory).
  [[nodiscard]] caf::expected<std::unique_ptr<tls_stream>>
  make_stream(int fd, bool server) const;

  /// Returns what the check at start found wrong with this node's own
  /// certificate that makes peers refuse it (one line each).
  const std::vector<std::string>& warnings() const noexcept {
    return warnings_;
  }

  /// Returns what is wrong with this node's certificate now ("expired",
  /// "not yet valid"), or an empty string.
  std::string own_problem() const;

private:
  tls_context() = default;

  struct ctx_deleter {
    void operator()(SSL_CTX* x) const;
  };

  std::unique_ptr<SSL_CTX, ctx_deleter> ctx_;
  std::vector<std::string> warnings_;
};

} // namespace ferry::detail::net
