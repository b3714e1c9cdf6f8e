// tls_bio: the BIO through which a TLS stream's SSL reads and writes its
// socket, never raising SIGPIPE and never blocking.
//
// OpenSSL's socket BIO writes with write(2), which raises SIGPIPE when the
// peer has gone; a library cannot ignore that signal for the whole process,
// and blocking it around every OpenSSL call costs system calls per record.
// This BIO is OpenSSL's socket BIO (its create, destroy and descriptor
// controls) with its own read and write: `recv(fd, ..., MSG_DONTWAIT)` and
// `send(fd, ..., MSG_DONTWAIT | MSG_NOSIGNAL)`, so a broken connection is an
// EPIPE error, and a socket left blocking by mistake still never waits. It
// sets OpenSSL's retry flags on EAGAIN and its end-of-file flag on EOF (how
// OpenSSL 3 tells an EOF without close_notify from a close_notify).
//
// It declines kernel TLS: sending alerts through kTLS needs OpenSSL's
// internal control-message flag, which only OpenSSL's own socket BIO (and
// its write(2)) understands, so the BIO answers no to OpenSSL's kTLS
// requests and records stay in user space.
//
// Thread-safety: the BIO method is made once (thread-safe); each BIO
// belongs to one SSL and is used under that SSL's lock.
#pragma once

#include <openssl/ossl_typ.h>

namespace ferry::detail::net {

/// Returns a new BIO (one reference) on the connected socket `fd`, which it
/// does not close, or null when OpenSSL cannot make one.
BIO* make_socket_bio(int fd);

} // namespace ferry::detail::net
