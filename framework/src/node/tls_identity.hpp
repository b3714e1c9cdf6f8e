// tls_identity: what OpenSSL saw of each TLS connection in this process,
// so that ferry can bind a peer's node name to the certificate it presented
// and say why a TLS handshake failed.
//
// CAF's OpenSSL module keeps its SSL objects to itself and verifies peers
// without a callback. `install` (idempotent, once per process) registers an
// OpenSSL ex_data index whose "new" callback runs inside every `SSL_new`
// and sets a verify callback, an info callback and a message callback on
// that SSL; they only record, CAF's verification decides as before. Each
// record is keyed by the remote address and port of the SSL's socket as
// CAF's `remote_addr_of_fd` / `remote_port_of_fd` give them, which is what
// the middleman's `get_atom` answers for the BASP connection to a node.
// It holds: which side this process is, whether the peer sent anything of
// TLS, the first certificate error this side found, the fatal alerts sent
// and received, and at handshake end the peer certificate's subject CN and
// subjectAltName DNS names with the verify result.
//
// Records are kept in order of creation, the newest `max_records` only
// (older ones are dropped, live or not). When an SSL whose handshake never
// finished is freed, the listeners registered for its local port hear of it
// (the accepting side's one log line per refused peer). A connect can also
// wait for the handshakes it began to end (`await_settled`): a connection
// CAF gave up on at a heartbeat tick lives on until its handshake ends
// (node/transport.cpp).
//
// Thread-safety: OpenSSL's callbacks run on CAF's multiplexer threads,
// queries and listener changes on any thread; one mutex guards the records,
// another the listeners, and listeners are called without the first held.
#pragma once

#include <openssl/ossl_typ.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ferry::detail::tls_identity {

/// Records kept at most.
inline constexpr size_t max_records = 512;

/// What OpenSSL showed of one TLS connection.
struct record {
  /// Order of creation, from 1.
  uint64_t seq = 0;
  std::string remote_addr;
  uint16_t remote_port = 0;
  uint16_t local_port = 0;
  /// Whether this process accepted the connection.
  bool server = false;
  /// Whether the peer sent a TLS handshake message or alert.
  bool peer_spoke_tls = false;
  /// Whether the handshake finished.
  bool done = false;
  /// Whether OpenSSL freed the SSL (the connection is closed).
  bool freed = false;
  /// `SSL_get_verify_result` at the end of the handshake.
  long verify_result = -1;
  /// The first error this side found in the peer's certificate chain (0:
  /// none).
  int x509_error = 0;
  /// Fatal alerts (TLS alert descriptions; -1: none).
  int alert_sent = -1;
  int alert_received = -1;
  /// Subject CN and subjectAltName DNS names of the peer's certificate.
  std::vector<std::string> names;
};

/// Installs the hook (once per process; later calls do nothing).
void install();

/// Returns the sequence number of the newest record (0: none).
uint64_t last_seq();

/// Returns the newest record of a finished handshake with `addr`:`port`.
std::optional<record> find_done(const std::string& addr, uint16_t port);

/// Returns the newest record of a connection this process opened to `port`
/// after record `since` (the one a failed connect made).
std::optional<record> find_failed_client(uint16_t port, uint64_t since);

/// Returns the records of the connections this process opened to `port`
/// after record `since` whose handshake has neither finished nor ended with
/// the connection.
std::vector<uint64_t> unsettled_clients(uint16_t port, uint64_t since);

/// Blocks until each record in `seqs` has finished its handshake or its
/// SSL is freed (a dropped record counts as settled), or until `deadline`;
/// returns whether they all settled.
bool await_settled(const std::vector<uint64_t>& seqs,
                   std::chrono::steady_clock::time_point deadline);

/// Blocks until the SSL of each record in `seqs` is freed (a dropped record
/// counts as freed), or until `deadline`; returns whether they all were.
bool await_freed(const std::vector<uint64_t>& seqs,
                 std::chrono::steady_clock::time_point deadline);

/// Calls `fn` (on a multiplexer thread) for each accepted connection on
/// local port `port` whose handshake failed, once it is closed; returns a
/// key for `unlisten`.
uint64_t listen(uint16_t port, std::function<void(const record&)> fn);

/// Stops the listener `key`.
void unlisten(uint64_t key);

/// Returns the subject CN and subjectAltName DNS names of `cert`.
std::vector<std::string> names_of(X509* cert);

/// Returns what an X509 verify error means, e.g. "unknown CA (unable to get
/// local issuer certificate)".
std::string describe_x509_error(int err);

/// Returns why the handshake of `x` failed, seen from this process;
/// `own_problem` (or empty) says what is wrong with this node's own
/// certificate.
std::string explain(const record& x, const std::string& own_problem);

} // namespace ferry::detail::tls_identity
