// tls_bench_support: what the TLS stream benchmarks share
// (tls_stream_bench.cpp, tls_exchange_bench.cpp): a throw-away PKI of two
// nodes (alpha, beta) made once per process, ferry's TLS contexts and
// OpenSSL contexts as a plain user makes them, loopback TCP pairs, and the
// waits and handshakes around non-blocking streams. A failure throws: a
// benchmark that cannot set itself up has nothing to measure.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "transport/plain_stream.hpp"
#include "transport/tls_context.hpp"

namespace ferry::tls_bench {

namespace net = ferry::detail::net;
using status = net::io_result::status;

/// The certificates of alpha and beta, made once per process.
inline const std::filesystem::path& pki() {
  static std::filesystem::path dir = [] {
    auto path = std::filesystem::temp_directory_path() /
                ("ferry-tls-bench-" + std::to_string(getpid()));
    auto command =
      std::string{FERRY_MAKE_TEST_PKI} + " " + path.string() + " alpha beta";
    if (std::system(command.c_str()) != 0)
      throw std::runtime_error("make_test_pki.sh failed");
    return path;
  }();
  return dir;
}

inline std::string file(const std::string& name) {
  return (pki() / name).string();
}

inline std::shared_ptr<const net::tls_context>
context_of(const std::string& name) {
  net::tls_options opts{file(name + ".pem"), file(name + ".key"),
                        file("ca.pem"), "", name};
  auto result = net::tls_context::make(opts);
  if (!result || !*result)
    throw std::runtime_error("cannot make the TLS context of " + name);
  return *result;
}

/// A connected loopback TCP pair (client, server).
inline std::pair<int, int> tcp_pair(bool nonblocking) {
  auto listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ::bind(listener, reinterpret_cast<sockaddr*>(&addr), len);
  ::listen(listener, 1);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  auto client = ::socket(AF_INET, SOCK_STREAM, 0);
  if (::connect(client, reinterpret_cast<sockaddr*>(&addr), len) != 0)
    throw std::runtime_error("cannot connect on loopback");
  auto server = ::accept(listener, nullptr, nullptr);
  ::close(listener);
  int one = 1;
  for (auto fd : {client, server}) {
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (nonblocking)
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  return {client, server};
}

inline void await(int fd, status state) {
  pollfd x{
    fd, static_cast<short>(state == status::want_write ? POLLOUT : POLLIN), 0};
  ::poll(&x, 1, -1);
}

/// Returns the CPU time the calling thread has used, in seconds.
inline double thread_cpu() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         static_cast<double>(ts.tv_nsec) * 1e-9;
}

[[noreturn]] inline void give_up(const std::string& what) {
  throw std::runtime_error(what);
}

inline const std::vector<std::byte>& payload() {
  static std::vector<std::byte> bytes = [] {
    std::vector<std::byte> result(size_t{1} << 20);
    uint32_t x = 12345;
    for (auto& b : result) {
      x = x * 1664525u + 1013904223u;
      b = static_cast<std::byte>(x >> 24);
    }
    return result;
  }();
  return bytes;
}

inline void handshake(net::stream& client, int client_fd, net::stream& server,
                      int server_fd) {
  auto c = client.handshake();
  auto s = server.handshake();
  while (!c.ok() || !s.ok()) {
    if (c.state == status::failed || s.state == status::failed)
      give_up("handshake: " + c.error + s.error);
    pollfd waits[2] = {
      {client_fd, static_cast<short>(c.ok() ? 0 : POLLIN | POLLOUT), 0},
      {server_fd, static_cast<short>(s.ok() ? 0 : POLLIN | POLLOUT), 0}};
    ::poll(waits, 2, 1000);
    if (!c.ok())
      c = client.handshake();
    if (!s.ok())
      s = server.handshake();
  }
}

/// An SSL_CTX as a plain OpenSSL user makes it (ferry-bench's tls-socket).
inline SSL_CTX* raw_context(const std::string& name, bool server, bool aes128,
                            long read_ahead = 0) {
  auto* ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  if (SSL_CTX_use_certificate_chain_file(ctx, file(name + ".pem").c_str()) !=
        1 ||
      SSL_CTX_use_PrivateKey_file(ctx, file(name + ".key").c_str(),
                                  SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_load_verify_locations(ctx, file("ca.pem").c_str(), nullptr) != 1)
    give_up("raw SSL_CTX of " + name);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                     nullptr);
  SSL_CTX_set_read_ahead(ctx, 1);
  if (server)
    SSL_CTX_set_num_tickets(ctx, 0);
  if (aes128)
    SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256");
  if (read_ahead > 0)
    SSL_CTX_set_default_read_buffer_len(ctx, static_cast<size_t>(read_ahead));
  return ctx;
}

/// Waits for what OpenSSL's last call on `ssl` (which returned `ret`)
/// wants of the socket `fd`.
inline void await_ssl(SSL* ssl, int ret, int fd, const char* what) {
  auto err = SSL_get_error(ssl, ret);
  if (err == SSL_ERROR_WANT_READ)
    await(fd, status::want_read);
  else if (err == SSL_ERROR_WANT_WRITE)
    await(fd, status::want_write);
  else
    give_up(what);
}

/// Makes an SSL of each context over the connected blocking sockets `c`
/// (client) and `s` (server) and runs their handshake (the server's on a
/// thread of its own); with `nonblocking`, the sockets are made
/// non-blocking afterwards. Returns {client, server}, the caller's to free.
inline std::pair<SSL*, SSL*> raw_pair(SSL_CTX* client_ctx, SSL_CTX* server_ctx,
                                      int c, int s, bool nonblocking) {
  auto* client = SSL_new(client_ctx);
  auto* server = SSL_new(server_ctx);
  SSL_set_fd(client, c);
  SSL_set_fd(server, s);
  std::thread accepting{[server] {
    SSL_accept(server);
  }};
  if (SSL_connect(client) != 1)
    give_up("SSL_connect");
  accepting.join();
  if (nonblocking)
    for (auto fd : {c, s})
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return {client, server};
}

} // namespace ferry::tls_bench
