// Throughput of ferry's TLS stream (framework/src/transport/tls_stream.hpp)
// against OpenSSL used plainly, over loopback TCP, one way:
//
//   BM_tls_stream/<write>/<read>    two tls_streams on non-blocking sockets;
//                                   a writer thread writes pieces of
//                                   <write> bytes, the benchmark's thread
//                                   reads into a <read>-byte buffer, both
//                                   waiting with poll() for what the stream
//                                   asks
//   BM_openssl_blocking/<write>/<suite>
//                                   SSL_write / SSL_read on blocking sockets
//                                   (SSL_set_fd, read-ahead, default read
//                                   buffer), as ferry-bench's tls-socket row
//                                   does it; suite 0 is OpenSSL's default
//                                   order (AES-256-GCM first), 1 is
//                                   TLS_AES_128_GCM_SHA256 (ferry's choice)
//   BM_openssl_nonblocking/<write>/<suite>
//                                   the same on non-blocking sockets, with
//                                   poll() on WANT_READ / WANT_WRITE (the
//                                   pattern the stream follows, without it)
//   BM_openssl_backlog/<read_ahead> one thread fills the socket with
//                                   SSL_write, then drains it with
//                                   SSL_read, so OpenSSL's read-ahead buffer
//                                   (<read_ahead> bytes, 0: OpenSSL's
//                                   default of one record) is always full:
//                                   the reader's cost per byte against the
//                                   buffer's size
//   BM_tls_stream_backlog           the same through the TLS streams
//   BM_plain_stream/<write>/<read>  the plain stream, for the loopback
//                                   ceiling
//
// Each iteration moves 1 GiB (--bytes=N to change it) over a fresh
// connection after its handshake (not timed); the rate is bytes/s, and
// writer_cpu_s_per_GiB / reader_cpu_s_per_GiB are each thread's CPU time
// per GiB moved, which other processes' load changes less than the rate
// (on a shared machine, compare the least of several runs).
//
// tls_exchange_bench.cpp adds the cost of small messages (BM_*_exchange).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tls_bench_support.hpp"

namespace {

using namespace ferry::tls_bench;

size_t total_bytes = size_t{1} << 30;

/// CPU seconds the writing and the reading thread spent, summed over
/// iterations.
struct cpu_use {
  double writer = 0;
  double reader = 0;
};

/// Writes `total_bytes` in pieces of `size` through `sut`.
void write_all(net::stream& sut, int fd, size_t size) {
  auto& data = payload();
  for (size_t sent = 0; sent < total_bytes;) {
    auto n = std::min({size, total_bytes - sent, data.size()});
    net::piece whole{data.data(), n};
    for (size_t taken = 0;;) {
      auto rest = whole.subspan(taken);
      auto result = sut.write({&rest, 1});
      taken += result.bytes;
      if (result.ok())
        break;
      if (result.state == status::failed || result.state == status::closed)
        give_up("write: " + result.error);
      await(fd, result.state);
    }
    sent += n;
  }
}

/// Reads `total_bytes` from `sut` into a buffer of `size`.
void read_all(net::stream& sut, int fd, size_t size) {
  std::vector<std::byte> buf(size);
  for (size_t got = 0; got < total_bytes;) {
    auto result = sut.read(buf);
    if (result.ok()) {
      got += result.bytes;
      benchmark::DoNotOptimize(buf.data());
      continue;
    }
    if (result.state == status::failed || result.state == status::closed)
      give_up("read: " + result.error);
    await(fd, result.state);
  }
}

/// Sets the rate and each thread's CPU time per GiB moved (what the load
/// of other processes changes least).
void set_rate(benchmark::State& state, const cpu_use& cpu) {
  auto bytes =
    static_cast<double>(total_bytes) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  auto gib = bytes / static_cast<double>(size_t{1} << 30);
  state.counters["writer_cpu_s_per_GiB"] = cpu.writer / gib;
  state.counters["reader_cpu_s_per_GiB"] = cpu.reader / gib;
}

void BM_tls_stream(benchmark::State& state) {
  cpu_use cpu;
  auto write_size = static_cast<size_t>(state.range(0));
  auto read_size = static_cast<size_t>(state.range(1));
  auto client_ctx = context_of("alpha");
  auto server_ctx = context_of("beta");
  for (auto _ : state) {
    state.PauseTiming();
    auto [c, s] = tcp_pair(true);
    auto client = client_ctx->make_stream(c, false);
    auto server = server_ctx->make_stream(s, true);
    if (!client || !server)
      give_up("make_stream");
    handshake(**client, c, **server, s);
    state.SetLabel((*client)->cipher());
    state.ResumeTiming();
    std::thread writer{[&, c = c] {
      auto start = thread_cpu();
      write_all(**client, c, write_size);
      cpu.writer += thread_cpu() - start;
    }};
    auto start = thread_cpu();
    read_all(**server, s, read_size);
    cpu.reader += thread_cpu() - start;
    writer.join();
    state.PauseTiming();
    client->reset();
    server->reset();
    ::close(c);
    ::close(s);
    state.ResumeTiming();
  }
  set_rate(state, cpu);
}

void BM_plain_stream(benchmark::State& state) {
  cpu_use cpu;
  auto write_size = static_cast<size_t>(state.range(0));
  auto read_size = static_cast<size_t>(state.range(1));
  for (auto _ : state) {
    state.PauseTiming();
    auto [c, s] = tcp_pair(true);
    net::plain_stream client{c};
    net::plain_stream server{s};
    state.ResumeTiming();
    std::thread writer{[&, c = c] {
      auto start = thread_cpu();
      write_all(client, c, write_size);
      cpu.writer += thread_cpu() - start;
    }};
    auto start = thread_cpu();
    read_all(server, s, read_size);
    cpu.reader += thread_cpu() - start;
    writer.join();
    state.PauseTiming();
    ::close(c);
    ::close(s);
    state.ResumeTiming();
  }
  set_rate(state, cpu);
}

/// SSL_write / SSL_read over loopback as a plain OpenSSL user writes them:
/// blocking sockets, or non-blocking ones with poll() on WANT_READ /
/// WANT_WRITE.
void run_openssl(benchmark::State& state, bool nonblocking) {
  cpu_use cpu;
  auto write_size = static_cast<size_t>(state.range(0));
  auto aes128 = state.range(1) == 1;
  auto* client_ctx = raw_context("alpha", false, aes128);
  auto* server_ctx = raw_context("beta", true, aes128);
  for (auto _ : state) {
    state.PauseTiming();
    auto [c, s] = tcp_pair(false);
    auto [client, server] = raw_pair(client_ctx, server_ctx, c, s, nonblocking);
    state.SetLabel(std::string{SSL_get_version(client)} + " " +
                   SSL_get_cipher_name(client));
    state.ResumeTiming();
    std::thread writer{[&, client = client, c = c] {
      auto start = thread_cpu();
      auto& data = payload();
      for (size_t sent = 0; sent < total_bytes;) {
        auto n = std::min({write_size, total_bytes - sent, data.size()});
        auto ret = SSL_write(client, data.data(), static_cast<int>(n));
        if (ret > 0)
          sent += n;
        else
          await_ssl(client, ret, c, "SSL_write");
      }
      cpu.writer += thread_cpu() - start;
    }};
    auto start = thread_cpu();
    std::vector<char> buf(256 * 1024);
    for (size_t got = 0; got < total_bytes;) {
      auto ret = SSL_read(server, buf.data(), static_cast<int>(buf.size()));
      if (ret > 0)
        got += static_cast<size_t>(ret);
      else
        await_ssl(server, ret, s, "SSL_read");
    }
    cpu.reader += thread_cpu() - start;
    writer.join();
    state.PauseTiming();
    SSL_free(client);
    SSL_free(server);
    ::close(c);
    ::close(s);
    state.ResumeTiming();
  }
  SSL_CTX_free(client_ctx);
  SSL_CTX_free(server_ctx);
  set_rate(state, cpu);
}

void BM_openssl_blocking(benchmark::State& state) {
  run_openssl(state, false);
}

void BM_openssl_nonblocking(benchmark::State& state) {
  run_openssl(state, true);
}

/// One thread writes until the socket is full, then reads all of it, and
/// again: the reader always finds OpenSSL's read-ahead buffer full.
/// `write(data, size)` returns the bytes taken (0: the socket is full),
/// `read(buf)` the bytes read (0: nothing left).
template <class Write, class Read>
void run_backlog(cpu_use& cpu, Write write, Read read) {
  auto& data = payload();
  std::vector<std::byte> buf(256 * 1024);
  for (size_t sent = 0, got = 0; got < total_bytes;) {
    auto start = thread_cpu();
    while (sent < total_bytes) {
      auto n = write(data.data(), std::min(data.size(), total_bytes - sent));
      if (n == 0)
        break;
      sent += n;
    }
    auto middle = thread_cpu();
    for (size_t n; (n = read(buf)) > 0;)
      got += n;
    cpu.writer += middle - start;
    cpu.reader += thread_cpu() - middle;
  }
}

void BM_openssl_backlog(benchmark::State& state) {
  cpu_use cpu;
  auto* client_ctx = raw_context("alpha", false, true, state.range(0));
  auto* server_ctx = raw_context("beta", true, true, state.range(0));
  for (auto _ : state) {
    auto [c, s] = tcp_pair(false);
    auto [client, server] = raw_pair(client_ctx, server_ctx, c, s, true);
    // A write OpenSSL could not finish is repeated with the same bytes.
    run_backlog(
      cpu,
      [client](const std::byte* bytes, size_t size) -> size_t {
        auto ret = SSL_write(client, bytes, static_cast<int>(size));
        return ret > 0 ? static_cast<size_t>(ret) : 0;
      },
      [server](std::span<std::byte> out) -> size_t {
        auto ret = SSL_read(server, out.data(), static_cast<int>(out.size()));
        return ret > 0 ? static_cast<size_t>(ret) : 0;
      });
    SSL_free(client);
    SSL_free(server);
    ::close(c);
    ::close(s);
  }
  SSL_CTX_free(client_ctx);
  SSL_CTX_free(server_ctx);
  set_rate(state, cpu);
}

void BM_tls_stream_backlog(benchmark::State& state) {
  cpu_use cpu;
  auto client_ctx = context_of("alpha");
  auto server_ctx = context_of("beta");
  for (auto _ : state) {
    auto [c, s] = tcp_pair(true);
    auto client = client_ctx->make_stream(c, false);
    auto server = server_ctx->make_stream(s, true);
    if (!client || !server)
      give_up("make_stream");
    handshake(**client, c, **server, s);
    // A piece the stream could not take is passed again from where it
    // stopped (stream.hpp); the payload's start is the same bytes.
    size_t offset = 0;
    run_backlog(
      cpu,
      [&](const std::byte* bytes, size_t size) -> size_t {
        net::piece rest{bytes + offset, size - offset};
        auto result = (*client)->write({&rest, 1});
        if (result.state == status::failed)
          give_up("write: " + result.error);
        offset = result.ok() ? 0 : offset + result.bytes;
        return result.ok() ? size : 0;
      },
      [&](std::span<std::byte> out) -> size_t {
        auto result = (*server)->read(out);
        if (result.state == status::failed)
          give_up("read: " + result.error);
        return result.ok() ? result.bytes : 0;
      });
    client->reset();
    server->reset();
    ::close(c);
    ::close(s);
  }
  set_rate(state, cpu);
}

constexpr int64_t kib = 1024;

BENCHMARK(BM_tls_stream)
  ->ArgNames({"write", "read"})
  ->Args({256 * kib, 1024 * kib})
  ->Args({1024 * kib, 1024 * kib})
  ->Args({256 * kib, 256 * kib})
  ->Iterations(1)
  ->UseRealTime()
  ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_openssl_blocking)
  ->ArgNames({"write", "aes128"})
  ->Args({256 * kib, 0})
  ->Args({256 * kib, 1})
  ->Iterations(1)
  ->UseRealTime()
  ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_openssl_nonblocking)
  ->ArgNames({"write", "aes128"})
  ->Args({256 * kib, 1})
  ->Iterations(1)
  ->UseRealTime()
  ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_openssl_backlog)
  ->ArgNames({"read_ahead"})
  ->Arg(0)
  ->Arg(64 * kib)
  ->Arg(256 * kib)
  ->Iterations(1)
  ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_tls_stream_backlog)->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK(BM_plain_stream)
  ->ArgNames({"write", "read"})
  ->Args({256 * kib, 1024 * kib})
  ->Iterations(1)
  ->UseRealTime()
  ->Unit(benchmark::kMillisecond);

} // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--bytes=", 8) == 0)
      total_bytes = std::strtoull(argv[i] + 8, nullptr, 10);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ignored;
  std::filesystem::remove_all(pki(), ignored);
  return 0;
}
