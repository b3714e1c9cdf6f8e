// tls_stream: a connection's bytes through OpenSSL, over a connected
// non-blocking socket (see transport/stream.hpp for the contract).
//
// Made by `tls_context::make_stream`: one SSL of the node's shared context,
// reading and writing the socket through a BIO that never raises SIGPIPE
// and never blocks (transport/tls_bio.hpp). Every call does what OpenSSL
// can do now and returns; the caller waits for the readiness the result
// names. No call loops waiting, sleeps or starts a thread.
//
// Reading: `read` calls `SSL_read` until the caller's buffer is full or
// OpenSSL needs the socket; OpenSSL reads ahead, so one `recv` brings several
// records and bytes may wait in OpenSSL that the socket no longer signals:
// read until `want_read` / `want_write` before waiting.
//
// Writing: a piece of 16 KiB (one record) or more goes to `SSL_write` as it
// is, in slices of at most `max_slice` bytes (so a reader waits for the lock
// one slice at most); smaller pieces (and the head of a large piece that
// follows them) are copied into a 16 KiB staging buffer and written as one
// full record, so small messages share records. Records reach the socket
// through a 64 KiB buffer, several per system call, and each `write` ends
// by flushing it: `ok` means all of it is on the socket. A write OpenSSL
// could not finish is repeated with the same bytes: the staging buffer's by
// the stream itself, a piece's by the caller, who passes it again from
// where `bytes` says (stream.hpp).
//
// After the handshake: the peer's names and verify result. When something
// fails: `explain()`, one sentence from this side ("refused the certificate
// of the peer at ...: unknown CA (...)", "the node at ... does not speak
// TLS (...)"), built from the SSL's own verify and message callbacks; the
// same sentence is the `error` of the failed result. With TLS 1.3 a
// client's handshake ends before the server has checked the client's
// certificate: a refusal fails the client's next `read` ("the node at ...
// refused this node's certificate (TLS alert: unknown CA)").
//
// Thread-safety: one thread may read while another writes (stream.hpp);
// `shutdown` belongs to the writing side. One mutex guards the SSL and
// every OpenSSL call on it, with the diagnosis its callbacks fill; the
// staging buffer and the unfinished write are the writer's alone. The
// getters may be called from any thread.
#pragma once

#include <caf/expected.hpp>

#include <openssl/ossl_typ.h>

#include <memory>
#include <string>
#include <vector>

#include "thread_safety.hpp"
#include "transport/stream.hpp"
#include "transport/tls_diagnosis.hpp"

namespace ferry::detail::net {

class tls_context;

class tls_stream final : public stream {
public:
  /// The size of a full TLS record's payload, and of the staging buffer.
  static constexpr size_t record_size = 16384;

  /// The most one `SSL_write` takes of a large piece.
  static constexpr size_t max_slice = 64 * 1024;

  ~tls_stream() override;

  tls_stream(const tls_stream&) = delete;
  tls_stream& operator=(const tls_stream&) = delete;

  io_result handshake() override;

  io_result read(std::span<std::byte> out) override;

  io_result write(std::span<const piece> pieces) override;

  void shutdown() noexcept override;

  const char* kind() const noexcept override { return "TLS"; }

  /// Returns whether the handshake finished on this side. (With TLS 1.3 a
  /// client finishes before the server has checked its certificate; a
  /// refusal then fails the client's next `read`.)
  bool handshake_done() const;

  /// Returns the subject CN and subjectAltName DNS names of the peer's
  /// verified certificate (empty before the handshake is done).
  std::vector<std::string> peer_names() const;

  /// Returns OpenSSL's verify result for the peer's certificate
  /// (`X509_V_OK` once the handshake is done; -1 before).
  long verify_result() const;

  /// Returns an empty string when the peer's certificate names `claimed`,
  /// else why a peer calling itself `claimed` is refused ("name mismatch:
  /// the peer presents a certificate for 'beta' but calls itself
  /// 'alpha'").
  std::string check_name(const std::string& claimed) const;

  /// Returns why the connection failed, in one sentence from this side, or
  /// an empty string while it has not.
  std::string explain() const;

  /// Returns the protocol and cipher in use, e.g. "TLSv1.3
  /// TLS_AES_128_GCM_SHA256" (empty before the handshake is done).
  std::string cipher() const;

  /// Returns the peer's address as the sentences name it ("addr:port").
  // Unchecked: `diag_.peer_addr` is constant after construction.
  const std::string&
  peer_addr() const noexcept FERRY_NO_THREAD_SAFETY_ANALYSIS {
    return diag_.peer_addr;
  }

private:
  friend class tls_context;

  /// Which write OpenSSL has begun and not finished.
  enum class unfinished : uint8_t { none, staging, piece };

  tls_stream(int fd, bool server);

  /// Makes the stream's SSL from `ctx`; see `tls_context::make_stream`.
  // Unchecked: it sets up the new stream before any other thread sees it.
  [[nodiscard]] static caf::expected<std::unique_ptr<tls_stream>>
  make(SSL_CTX* ctx, int fd, bool server) FERRY_NO_THREAD_SAFETY_ANALYSIS;

  /// Drives the handshake one step.
  io_result drive_handshake() FERRY_REQUIRES(mtx_);

  /// Hands `size` bytes at `data` to one `SSL_write` under the lock.
  io_result write_to_ssl(const std::byte* data, size_t size)
    FERRY_EXCLUDES(mtx_);

  /// Writes the staging buffer; on `want_*` it stays unfinished.
  io_result flush_staging() FERRY_EXCLUDES(mtx_);

  /// Sends the records OpenSSL's write buffer holds (transport/tls_bio.hpp).
  io_result flush_socket() FERRY_EXCLUDES(mtx_);

  /// Turns an OpenSSL call's failure into a result; `err` is errno right
  /// after the call, `doing` what it did ("reading the socket").
  io_result outcome(int err, const char* doing) FERRY_REQUIRES(mtx_);

  /// Makes the failure sticky and returns it.
  io_result fail(std::string sentence) FERRY_REQUIRES(mtx_);

  // -- constant after construction ------------------------------------------

  int fd_;

  // -- guarded by mtx_ ------------------------------------------------------

  mutable mutex mtx_;
  SSL* ssl_ FERRY_GUARDED_BY(mtx_) = nullptr;
  /// Filled by the SSL's callbacks, which run inside calls holding `mtx_`;
  /// its `peer_addr` and `server` are constant after construction.
  tls_diagnosis diag_ FERRY_GUARDED_BY(mtx_);
  /// Why the connection failed (empty: it has not).
  std::string failure_ FERRY_GUARDED_BY(mtx_);
  /// Whether the peer's close_notify arrived.
  bool read_closed_ FERRY_GUARDED_BY(mtx_) = false;
  std::vector<std::string> peer_names_ FERRY_GUARDED_BY(mtx_);
  long verify_result_ FERRY_GUARDED_BY(mtx_) = -1;

  // -- the reader's alone ---------------------------------------------------

  /// The last read ended for want of the socket's bytes.
  bool drained_ = false;

  // -- the writer's alone ---------------------------------------------------

  std::unique_ptr<std::byte[]> staging_;
  size_t staged_ = 0;
  unfinished unfinished_ = unfinished::none;
  /// The size of the unfinished piece write.
  size_t unfinished_size_ = 0;
};

} // namespace ferry::detail::net
