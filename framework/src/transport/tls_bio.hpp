// tls_bio: how a TLS stream's SSL reaches its socket: reads straight from
// it, writes through a buffer, never raising SIGPIPE and never blocking.
//
// OpenSSL's socket BIO writes with write(2), which raises SIGPIPE when the
// peer has gone; a library cannot ignore that signal for the whole process,
// and blocking it around every OpenSSL call costs system calls per record.
// The socket BIO here is OpenSSL's (its create, destroy and descriptor
// controls) with its own read and write: `recv(fd, ..., MSG_DONTWAIT)` and
// `send(fd, ..., MSG_DONTWAIT | MSG_NOSIGNAL)`, so a broken connection is an
// EPIPE error, and a socket left blocking by mistake still never waits. It
// sets OpenSSL's retry flags on EAGAIN and its end-of-file flag on EOF (how
// OpenSSL 3 tells an EOF without close_notify from a close_notify).
//
// OpenSSL hands each record (at most 16 KiB) to its write BIO on its own,
// so the write BIO is a buffer of ferry's own in front of the socket:
// records collect in `write_buffer_size` bytes and reach the socket about
// four at a time (fewer system calls and TCP segments; the records' copy
// costs less than it saves, measured with bench/framework/
// tls_stream_bench.cpp). A record written stays in the buffer until it is
// full or flushed: the stream flushes at the end of each write
// (`BIO_flush(SSL_get_wbio(ssl))`), OpenSSL after each handshake flight
// and alert. A full buffer sends what the socket takes before it takes
// more; when the socket takes nothing, the write asks to be retried
// (OpenSSL's `SSL_ERROR_WANT_WRITE`). It is OpenSSL's buffering BIO
// (`BIO_f_buffer`) without the chain: one call per record and per flush
// instead of three, which a small message's round trip feels.
//
// The socket BIO declines kernel TLS: sending alerts through kTLS needs
// OpenSSL's internal control-message flag, which only OpenSSL's own socket
// BIO (and its write(2)) understands, so it answers no to OpenSSL's kTLS
// requests and records stay in user space.
//
// Thread-safety: the BIO methods are made once (thread-safe); the BIOs
// belong to one SSL and are used under that SSL's lock.
#pragma once

#include <openssl/ossl_typ.h>

#include <cstddef>

namespace ferry::detail::net {

/// Bytes of records collected before they go to the socket.
inline constexpr size_t write_buffer_size = 64 * 1024;

/// Gives `ssl` the connected socket `fd`, which OpenSSL does not close:
/// reads straight from it, writes through a buffer of `write_buffer_size`
/// bytes.
/// Returns false when OpenSSL cannot make the BIOs.
[[nodiscard]] bool attach_socket(SSL* ssl, int fd);

/// What the socket reads of such BIOs on this thread saw since the last
/// call: none, or whether the last one found the socket empty (it took less
/// than asked, or nothing). A reader whose SSL holds no more bytes, and
/// whose last read found the socket empty, knows the socket has none.
enum class socket_read { none, more, drained };

/// Returns what the last socket read on this thread saw, and forgets it.
[[nodiscard]] socket_read take_socket_read() noexcept;

} // namespace ferry::detail::net
