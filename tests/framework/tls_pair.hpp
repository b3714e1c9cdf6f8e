// Two streams of one process over a loopback TCP connection, for the TLS
// stream and context tests (tls_*_test.cpp).
//
// The test PKI is made at first use by make_test_pki.sh (the `openssl`
// command) in a directory of the process's own, removed when the tests end:
// CA "ca" signs alpha, beta, gamma, expired, future and locked (key
// encrypted with "secret"); CA "other" signs mallory; both.pem trusts both
// CAs. `handshake` and `exchange` drive both ends in the test's thread with
// poll(): each call does what the sockets allow, then the loop waits for
// the readiness the streams asked for (no sleeps), up to a deadline that
// only a hung test reaches.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "transport/stream.hpp"
#include "transport/tls_context.hpp"

namespace ferry::test::tls_pair {

namespace net = ferry::detail::net;

/// Returns the path of `name` in the test PKI (made at the first call).
std::string file(const std::string& name);

/// Returns the options of a node named `name` holding `name`'s certificate
/// and key and trusting `ca`.
net::tls_options options_of(const std::string& name,
                            const std::string& ca = "ca.pem");

/// Returns the context of `options_of(name, ca)`; fails the test (and
/// returns null) when it cannot be made.
std::shared_ptr<const net::tls_context>
context_of(const std::string& name, const std::string& ca = "ca.pem");

/// A connected loopback TCP connection, both ends non-blocking; closes
/// them when it goes.
struct sockets {
  int client = -1;
  int server = -1;

  sockets() = default;
  sockets(const sockets&) = delete;
  sockets& operator=(const sockets&) = delete;
  ~sockets();
};

/// Connects a pair; `buffer` (if not 0) sets both ends' kernel send and
/// receive buffers, so that a socket fills after a few records.
std::unique_ptr<sockets> connect_pair(int buffer = 0);

/// Waits until `fd` is ready for what `state` asks (`want_read`: readable,
/// `want_write`: writable); returns false after 10 s.
bool wait_for(int fd, net::io_result::status state);

/// Returns whether `fd` is readable now (without waiting).
bool readable_now(int fd);

/// The last results of both ends' handshakes.
struct handshake_results {
  net::io_result client;
  net::io_result server;
};

/// Drives both handshakes until each ends (ok, failed or closed). An end
/// that fails has its socket shut down, as a connection closes it.
handshake_results handshake(net::stream& client, net::stream& server,
                            const sockets& fds);

/// What reading one end until a count or an end brought.
struct read_outcome {
  std::vector<std::byte> bytes;
  /// The last result (ok when `bytes` reached the count).
  net::io_result last;
};

/// Reads from `sut` (on socket `fd`) until `count` bytes came, or it ends or
/// fails, waiting for readiness between calls.
read_outcome read_all(net::stream& sut, int fd, size_t count,
                      size_t buffer_size = 64 * 1024);

/// One end of an exchange: what it sends, in pieces that point into memory
/// kept alive by the caller, and how much it expects to receive.
struct end {
  end(net::stream* sut, int fd, std::vector<net::piece> pieces, size_t expected)
      : sut(sut), fd(fd), pieces(std::move(pieces)), expected(expected) {
    // nop
  }

  net::stream* sut = nullptr;
  int fd = -1;
  std::vector<net::piece> pieces;
  size_t expected = 0;
  std::vector<std::byte> received;
  /// The read buffer's size.
  size_t buffer_size = 64 * 1024;
};

/// Sends both ends' pieces to the other end and reads what comes, until all
/// arrived; fails the test (and returns false) on a failure or deadline.
bool exchange(end& a, end& b);

/// Cuts `bytes` into pieces whose sizes cycle through `sizes`.
std::vector<net::piece> cut(std::span<const std::byte> bytes,
                            const std::vector<size_t>& sizes);

/// Returns `n` bytes of a pattern that differs per `seed`.
std::vector<std::byte> pattern(size_t n, unsigned seed);

} // namespace ferry::test::tls_pair
