// Round trips of small messages through one thread, both ends of a
// loopback TCP connection in turn, so no thread ever waits or wakes: the
// time of one exchange (a message each way) is the CPU the streams and the
// kernel spend on two messages.
//
//   BM_plain_stream_exchange/<size>   ferry's plain stream
//   BM_tls_stream_exchange/<size>     ferry's TLS stream
//   BM_openssl_exchange/<size>        SSL_write / SSL_read on the same
//                                     sockets, as a plain OpenSSL user
//                                     calls them (TLS_AES_128_GCM_SHA256)
//
// The TLS rows' premium over the plain one is what OpenSSL costs a small
// message with warm caches; docs/architecture.md ("Idle strategies")
// compares it with what a TLS round trip between two nodes pays.
#include <benchmark/benchmark.h>
#include <openssl/ssl.h>

#include <cstddef>
#include <span>
#include <thread>
#include <vector>

#include "tls_bench_support.hpp"

namespace {

using namespace ferry::tls_bench;

/// One thread, both ends: `size` bytes from a to b, then back, over and
/// over, each read spinning until its bytes arrived. No thread waits, so
/// the time per exchange is the CPU two messages cost each way's stream.
template <class Write, class Read>
void run_exchange(benchmark::State& state, Write write, Read read) {
  auto size = static_cast<size_t>(state.range(0));
  std::vector<std::byte> buf(64 * 1024);
  for (auto _ : state) {
    for (int side = 0; side < 2; ++side) {
      write(side, payload().data(), size);
      for (size_t got = 0; got < size;)
        got += read(1 - side, std::span<std::byte>{buf.data(), buf.size()});
    }
  }
  state.SetItemsProcessed(state.iterations());
}

/// `run_exchange` through two of ferry's streams, `ends[0]` and `ends[1]`.
void stream_exchange(benchmark::State& state, net::stream* ends[2]) {
  run_exchange(
    state,
    [&](int side, const std::byte* data, size_t n) {
      net::piece whole{data, n};
      if (auto r = ends[side]->write({&whole, 1}); !r.ok())
        give_up("write: " + r.error);
    },
    [&](int side, std::span<std::byte> out) -> size_t {
      auto r = ends[side]->read(out);
      if (r.state == status::failed || r.state == status::closed)
        give_up("read: " + r.error);
      return r.ok() ? r.bytes : 0;
    });
}

void BM_tls_stream_exchange(benchmark::State& state) {
  auto [c, s] = tcp_pair(true);
  auto client = context_of("alpha")->make_stream(c, false);
  auto server = context_of("beta")->make_stream(s, true);
  if (!client || !server)
    give_up("make_stream");
  handshake(**client, c, **server, s);
  net::stream* ends[2] = {client->get(), server->get()};
  stream_exchange(state, ends);
  client->reset();
  server->reset();
  ::close(c);
  ::close(s);
}

void BM_plain_stream_exchange(benchmark::State& state) {
  auto [c, s] = tcp_pair(true);
  net::plain_stream client{c};
  net::plain_stream server{s};
  net::stream* ends[2] = {&client, &server};
  stream_exchange(state, ends);
  ::close(c);
  ::close(s);
}

void BM_openssl_exchange(benchmark::State& state) {
  auto* client_ctx = raw_context("alpha", false, true);
  auto* server_ctx = raw_context("beta", true, true);
  auto [c, s] = tcp_pair(false);
  auto [client, server] = raw_pair(client_ctx, server_ctx, c, s, true);
  SSL* ends[2] = {client, server};
  run_exchange(
    state,
    [&](int side, const std::byte* data, size_t n) {
      if (SSL_write(ends[side], data, static_cast<int>(n)) <= 0)
        give_up("SSL_write");
    },
    [&](int side, std::span<std::byte> out) -> size_t {
      auto ret = SSL_read(ends[side], out.data(), static_cast<int>(out.size()));
      return ret > 0 ? static_cast<size_t>(ret) : 0;
    });
  SSL_free(client);
  SSL_free(server);
  ::close(c);
  ::close(s);
  SSL_CTX_free(client_ctx);
  SSL_CTX_free(server_ctx);
}

BENCHMARK(BM_plain_stream_exchange)->ArgNames({"size"})->Arg(64)->Arg(4096);
BENCHMARK(BM_tls_stream_exchange)->ArgNames({"size"})->Arg(64)->Arg(4096);
BENCHMARK(BM_openssl_exchange)->ArgNames({"size"})->Arg(64)->Arg(4096);

} // namespace
