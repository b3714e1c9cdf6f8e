// What MSG_ZEROCOPY does for large writes on a TCP connection over
// loopback, where ferry's tcp rows run:
//
//   BM_send/<write>/<zerocopy>   a writer thread sends 1 GiB (--bytes=N to
//                                change it) in writes of <write> bytes from
//                                one buffer; the benchmark's thread reads it
//                                into a 256 KiB buffer. zerocopy 1 sets
//                                SO_ZEROCOPY and sends with MSG_ZEROCOPY,
//                                reaping the kernel's completions from the
//                                socket's error queue as a sender must
//                                before it reuses its buffer.
//
// Counters: the rate (bytes/s), writer_cpu_s_per_GiB (the writer thread's
// CPU time per GiB, which other load changes less than the rate), and for
// zerocopy rows copied_share, the share of completed sends the kernel
// reported as copied after all (SO_EE_CODE_ZEROCOPY_COPIED): on loopback
// the receiving socket cannot keep the sender's pages, so the kernel copies
// them anyway, after pinning them and before it reports the completion.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifndef SO_ZEROCOPY
#  define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#  define MSG_ZEROCOPY 0x4000000
#endif

namespace {

uint64_t total_bytes = uint64_t{1} << 30;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// A connected pair of loopback TCP sockets (blocking).
struct socket_pair {
  int writer = -1;
  int reader = -1;

  socket_pair() {
    int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0)
      fail("socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), len) != 0
        || ::listen(listener, 1) != 0
        || ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len)
             != 0)
      fail("listen");
    writer = ::socket(AF_INET, SOCK_STREAM, 0);
    if (writer < 0
        || ::connect(writer, reinterpret_cast<sockaddr*>(&addr), len) != 0)
      fail("connect");
    reader = ::accept(listener, nullptr, nullptr);
    if (reader < 0)
      fail("accept");
    ::close(listener);
    int one = 1;
    ::setsockopt(writer, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }

  ~socket_pair() {
    ::close(writer);
    ::close(reader);
  }
};

/// Completions of zerocopy sends reaped so far.
struct completions {
  uint64_t done = 0;   // sends completed
  uint64_t copied = 0; // of which the kernel copied
};

/// Reads what the error queue holds without waiting; returns false when
/// it held nothing.
bool reap(int fd, completions& out) {
  char control[128];
  msghdr msg{};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  if (::recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      return false;
    fail("recvmsg(MSG_ERRQUEUE)");
  }
  for (auto* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    auto* err = reinterpret_cast<sock_extended_err*>(CMSG_DATA(c));
    if (err->ee_errno != 0 || err->ee_origin != SO_EE_ORIGIN_ZEROCOPY)
      continue;
    // ee_info..ee_data: the range of send calls completed.
    auto n = static_cast<uint64_t>(err->ee_data - err->ee_info) + 1;
    out.done += n;
    if ((err->ee_code & SO_EE_CODE_ZEROCOPY_COPIED) != 0)
      out.copied += n;
  }
  return true;
}

void BM_send(benchmark::State& state) {
  auto write_size = static_cast<size_t>(state.range(0));
  bool zerocopy = state.range(1) != 0;
  std::vector<std::byte> source(write_size, std::byte{0x5a});
  std::vector<std::byte> sink(256 * 1024);
  double writer_cpu = 0;
  completions reaped;
  for (auto _ : state) {
    socket_pair pair;
    if (zerocopy) {
      int one = 1;
      if (::setsockopt(pair.writer, SOL_SOCKET, SO_ZEROCOPY, &one,
                       sizeof(one))
          != 0) {
        state.SkipWithError("SO_ZEROCOPY is not available on this kernel");
        return;
      }
    }
    std::atomic<double> cpu{0};
    std::string error;
    std::thread writer{[&] {
      try {
        auto start = thread_cpu_seconds();
        uint64_t left = total_bytes;
        uint64_t issued = 0;
        while (left > 0) {
          auto n = static_cast<size_t>(std::min<uint64_t>(left, write_size));
          auto put = ::send(pair.writer, source.data(), n,
                            zerocopy ? MSG_ZEROCOPY : 0);
          if (put < 0) {
            // Too many sends in flight: take completions, then go on.
            if (zerocopy && errno == ENOBUFS) {
              pollfd p{pair.writer, 0, 0};
              ::poll(&p, 1, 10);
              while (reap(pair.writer, reaped)) {
              }
              continue;
            }
            fail("send");
          }
          ++issued;
          left -= static_cast<uint64_t>(put);
          if (zerocopy)
            while (reap(pair.writer, reaped)) {
            }
        }
        // Every buffer is the sender's again only after its completion.
        while (zerocopy && reaped.done < issued) {
          pollfd p{pair.writer, 0, 0};
          ::poll(&p, 1, 10);
          while (reap(pair.writer, reaped)) {
          }
        }
        cpu = thread_cpu_seconds() - start;
      } catch (const std::exception& e) {
        error = e.what();
      }
      ::shutdown(pair.writer, SHUT_WR);
    }};
    uint64_t got = 0;
    for (;;) {
      auto n = ::recv(pair.reader, sink.data(), sink.size(), 0);
      if (n <= 0)
        break;
      got += static_cast<uint64_t>(n);
    }
    writer.join();
    if (!error.empty() || got != total_bytes) {
      state.SkipWithError(error.empty() ? "short read" : error.c_str());
      return;
    }
    writer_cpu += cpu.load();
  }
  auto gib = static_cast<double>(total_bytes) / (1 << 30)
             * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(total_bytes)
                          * state.iterations());
  state.counters["writer_cpu_s_per_GiB"] = writer_cpu / gib;
  if (zerocopy && reaped.done > 0)
    state.counters["copied_share"] = static_cast<double>(reaped.copied)
                                     / static_cast<double>(reaped.done);
}

BENCHMARK(BM_send)
  ->ArgNames({"write", "zerocopy"})
  ->ArgsProduct({{64 * 1024, 256 * 1024, 1 << 20}, {0, 1}})
  ->Unit(benchmark::kMillisecond)
  ->UseRealTime()
  ->Iterations(3);

} // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--bytes=", 0) == 0)
      total_bytes = std::strtoull(arg.c_str() + 8, nullptr, 10);
    else
      rest.push_back(argv[i]);
  }
  int count = static_cast<int>(rest.size());
  benchmark::Initialize(&count, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
