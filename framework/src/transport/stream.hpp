// stream: the bytes of one TCP connection, plain or TLS, over a connected
// non-blocking socket whose readiness the caller waits for (Asio's
// `async_wait` on the connection's socket, transport/connection.hpp).
//
// A stream never blocks and never waits: each call moves what the socket
// (and, for TLS, OpenSSL's buffers) allows now and says what it needs to go
// on (`want_read`, `want_write`). The caller owns the socket and its
// readiness; the stream owns what lies between the socket and the bytes the
// caller reads and writes (nothing for plain, OpenSSL's session for TLS).
//
// Reading: `read` fills as much of the caller's buffer as it can. A TLS
// stream may hold decrypted or undecrypted bytes in OpenSSL's buffers that
// the socket no longer signals, so a caller reads until `read` says
// `want_read` (or `want_write`) before it waits for the socket again. A
// read that found the socket empty while filling the buffer (a short
// `recv`, or OpenSSL asking for more after some records) returns its bytes
// and remembers it: the next read says `want_read` without another system
// call. The socket was empty then, so waiting for it loses nothing (what
// arrives later signals it).
//
// Writing: `write` takes the caller's pieces in order. What it reports as
// taken is the stream's from then on (written to the socket, or copied into
// the stream's own buffer); the caller passes the rest again on the next
// call, starting with the same piece at the same place, its memory
// unchanged (OpenSSL requires a write it could not finish to be repeated
// with the same buffer). `ok` means everything taken has also reached the
// socket; `want_write` (or `want_read`) means the stream still holds bytes,
// or has pieces left, and the caller calls `write` again, with the pieces
// not taken (possibly none), once the socket is ready.
//
// Thread-safety: one thread may read while another writes (the connection's
// I/O thread reads; senders write under the connection's send lock); two
// reads or two writes at once are the caller's error. A TLS stream
// serialises its use of OpenSSL inside.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace ferry::detail::net {

/// What a stream call did.
struct io_result {
  enum class status : uint8_t {
    /// Done: bytes were read, or everything taken reached the socket.
    ok,
    /// The call can go on once the socket is readable.
    want_read,
    /// The call can go on once the socket is writable.
    want_write,
    /// The peer closed the connection in order (EOF, or TLS close_notify).
    closed,
    /// The connection failed; `error` says how.
    failed,
  };

  /// Bytes read, or bytes of the caller's pieces taken.
  size_t bytes = 0;
  status state = status::ok;
  /// What failed (state `failed` only).
  std::string error;
  /// The socket's errno behind a failure, when it was one (0: none).
  int sys_error = 0;

  bool ok() const noexcept { return state == status::ok; }
};

/// A run of bytes to write.
using piece = std::span<const std::byte>;

class stream {
public:
  virtual ~stream();

  /// Drives the TLS handshake as far as the socket allows: `ok` once it is
  /// done (at once for a plain stream), else `want_read` / `want_write`,
  /// or `failed` / `closed`.
  virtual io_result handshake() = 0;

  /// Reads up to `out.size()` bytes into `out`: `ok` with `bytes` > 0, or
  /// `want_read` (nothing to read now), `want_write` (TLS: OpenSSL must
  /// write first), `closed` or `failed`.
  virtual io_result read(std::span<std::byte> out) = 0;

  /// Writes `pieces` in order as far as the socket allows; `bytes` says how
  /// many bytes of them the stream took (see the file comment).
  virtual io_result write(std::span<const piece> pieces) = 0;

  /// Ends the sending side (TLS: a close_notify alert), as far as the
  /// socket takes it now; never blocks.
  virtual void shutdown() noexcept = 0;

  /// Returns "TLS" or "plain", for log lines.
  virtual const char* kind() const noexcept = 0;
};

} // namespace ferry::detail::net
