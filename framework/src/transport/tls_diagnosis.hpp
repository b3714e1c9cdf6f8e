// tls_diagnosis: what one TLS connection showed of its peer while OpenSSL
// drove it, and the one sentence that says why it failed, seen from this
// side, plus the certificate helpers the TLS context and streams share.
//
// A tls_stream fills a `tls_diagnosis` from its SSL's own callbacks (the
// verify callback records the first X509 error this side found, the message
// callback whether the peer sent any TLS handshake message or alert and the
// alerts either side sent); `explain` turns it into a sentence such as
// "refused the certificate of the peer at 10.0.0.2:4242: unknown CA (...)"
// or "the node at 10.0.0.2:4242 does not speak TLS (...)". The connection
// code logs these lines prefixed "TLS: "; tests look for the words "unknown
// CA", "expired", "not yet valid", "does not speak TLS" and "name mismatch",
// so those stay.
//
// Thread-safety: plain values and pure functions; the stream that owns a
// diagnosis guards it with its own mutex.
#pragma once

#include <openssl/ossl_typ.h>

#include <string>
#include <vector>

namespace ferry::detail::net {

/// What OpenSSL showed of one TLS connection.
struct tls_diagnosis {
  /// Whether this side accepted the connection.
  bool server = false;
  /// The peer's address as "addr:port" (or "a local socket").
  std::string peer_addr;
  /// Whether the peer sent a TLS handshake message or alert.
  bool peer_spoke_tls = false;
  /// Whether the handshake finished on this side.
  bool handshake_done = false;
  /// The first error this side found in the peer's certificate chain (0:
  /// none).
  int x509_error = 0;
  /// The first alert (other than close_notify) each side sent (TLS alert
  /// descriptions; -1: none).
  int alert_sent = -1;
  int alert_received = -1;
  /// Whether the connection ended without the peer's close_notify (EOF).
  bool cut_short = false;
};

/// Returns the peer as the sentences name it: "the peer at ADDR" when this
/// side accepted, "the node at ADDR" when it connected.
std::string peer_of(const tls_diagnosis& x);

/// Returns why the connection of `x` failed, in one sentence from this side.
/// `own_problem` (or empty) says what is wrong with this node's certificate
/// now ("expired", "not yet valid"); `detail` (or empty) is what OpenSSL or
/// the socket reported, added where the diagnosis alone says too little.
std::string explain(const tls_diagnosis& x, const std::string& own_problem,
                    const std::string& detail);

/// Returns the subject CN and subjectAltName DNS names of `cert`, sorted,
/// without duplicates.
std::vector<std::string> names_of(X509* cert);

/// Returns what an X509 verify error means, e.g. "unknown CA (unable to get
/// local issuer certificate)".
std::string describe_x509_error(int err);

/// Returns what a TLS alert means, e.g. "unknown CA".
std::string alert_text(int desc);

/// Returns what is wrong with `cert` now ("expired", "not yet valid"), or an
/// empty string.
std::string validity_problem(X509* cert);

/// Returns an empty string when `names` holds `claimed`, else why a peer
/// calling itself `claimed` is refused ("name mismatch: ...").
std::string name_mismatch(const std::vector<std::string>& names,
                          const std::string& claimed);

/// Empties this thread's OpenSSL error queue and returns its oldest entry as
/// text, or an empty string when it was empty.
std::string take_openssl_error();

} // namespace ferry::detail::net
