// The load program's socket baseline (see load_socket.hpp).
#include "load_socket.hpp"

#include "byte_stream.hpp"
#include "driver.hpp"
#include "load_histogram.hpp"
#include "load_runs.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

namespace ferry::bench {

namespace {

/// One connection of the server: bytes of a request read so far, answers
/// not written yet.
struct server_conn {
  std::vector<char> partial;
  std::vector<char> out;
};

void set_nonblocking(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/// Writes what it can of `c.out`; returns false when the connection broke.
bool flush(int fd, server_conn& c) {
  size_t done = 0;
  while (done < c.out.size()) {
    auto n = ::send(fd, c.out.data() + done, c.out.size() - done,
                    MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        break;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  c.out.erase(c.out.begin(), c.out.begin() + static_cast<ptrdiff_t>(done));
  return true;
}

/// Reads what arrived on `fd` and queues an answer per whole request;
/// returns false when the connection ended.
bool serve(int fd, server_conn& c) {
  char buf[64 * 1024];
  for (;;) {
    auto n = ::recv(fd, buf, sizeof(buf), 0);
    if (n == 0)
      return false;
    if (n < 0)
      return errno == EAGAIN || errno == EWOULDBLOCK;
    c.partial.insert(c.partial.end(), buf, buf + n);
    size_t whole = c.partial.size() / socket_load_request_bytes;
    for (size_t i = 0; i < whole; ++i) {
      auto* req = c.partial.data() + i * socket_load_request_bytes;
      c.out.insert(c.out.end(), req, req + socket_load_answer_bytes);
    }
    c.partial.erase(c.partial.begin(),
                    c.partial.begin()
                      + static_cast<ptrdiff_t>(whole
                                               * socket_load_request_bytes));
    if (!flush(fd, c))
      return false;
    if (static_cast<size_t>(n) < sizeof(buf))
      return true;
  }
}

} // namespace

int socket_load_server_main(const std::string& address) {
  std::unique_ptr<tcp_listener> listener;
  try {
    listener = std::make_unique<tcp_listener>(address);
  } catch (std::exception& e) {
    std::cerr << "ferry-bench socket-load peer: " << e.what() << '\n';
    return 1;
  }
  std::cout << "port " << listener->port() << std::endl;
  int ep = ::epoll_create1(EPOLL_CLOEXEC);
  std::atomic<bool> done{false};
  // Connections arrive through a thread blocked in accept, handed to the
  // epoll loop by registering them (epoll_ctl may be called from any
  // thread).
  std::thread acceptor{[&] {
    for (;;) {
      int fd = listener->accept();
      if (fd < 0)
        return;
      set_nonblocking(fd);
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.fd = fd;
      ::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    }
  }};
  std::thread loop{[&] {
    std::map<int, server_conn> conns;
    epoll_event events[64];
    while (!done) {
      int n = ::epoll_wait(ep, events, 64, 100);
      for (int i = 0; i < n; ++i) {
        int fd = events[i].data.fd;
        auto& c = conns[fd];
        bool alive = true;
        if (events[i].events & EPOLLIN)
          alive = serve(fd, c);
        if (alive && (events[i].events & EPOLLOUT))
          alive = flush(fd, c);
        if (alive && (events[i].events & (EPOLLHUP | EPOLLERR)))
          alive = false;
        if (!alive) {
          ::epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
          ::close(fd);
          conns.erase(fd);
          continue;
        }
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLRDHUP | (c.out.empty() ? 0u : EPOLLOUT);
        ev.data.fd = fd;
        ::epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
      }
    }
    for (auto& [fd, c] : conns)
      ::close(fd);
  }};
  std::string line;
  while (std::getline(std::cin, line)) {
    // nop: the server runs until stdin closes
  }
  done = true;
  listener->shutdown();
  acceptor.join();
  loop.join();
  ::close(ep);
  return 0;
}

namespace {

/// Runs one step on `fd`: `rate` requests a second for `millis` ms.
std::string socket_step(int fd, double rate, uint64_t millis) {
  auto count = static_cast<uint64_t>(rate * static_cast<double>(millis) / 1e3);
  auto interval_ns = 1e9 / rate;
  auto start = now_ns() + 1'000'000;
  auto scheduled = [&](uint64_t i) {
    return start + static_cast<uint64_t>(static_cast<double>(i) * interval_ns);
  };
  std::atomic<uint64_t> sent{0};
  std::atomic<bool> broken{false};
  std::thread sender{[&] {
    char req[socket_load_request_bytes] = {};
    for (uint64_t next = 0; next < count && !broken; ++next) {
      auto due = scheduled(next);
      auto now = now_ns();
      if (due > now + 50'000)
        std::this_thread::sleep_for(std::chrono::nanoseconds(due - now
                                                             - 50'000));
      while (now_ns() < due)
        std::this_thread::yield();
      std::memcpy(req, &next, sizeof(next));
      size_t off = 0;
      while (off < sizeof(req)) {
        auto n = ::send(fd, req + off, sizeof(req) - off, MSG_NOSIGNAL);
        if (n <= 0) {
          broken = true;
          return;
        }
        off += static_cast<size_t>(n);
      }
      sent = next + 1;
    }
  }};
  latency_histogram h;
  uint64_t ok = 0;
  char buf[4096];
  size_t have = 0;
  auto deadline = now_ns() + millis * 1'000'000 + 11'000'000'000ull;
  while (ok < count && !broken && now_ns() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0)
      continue;
    auto n = ::recv(fd, buf + have, sizeof(buf) - have, 0);
    if (n <= 0) {
      broken = true;
      break;
    }
    have += static_cast<size_t>(n);
    size_t whole = have / socket_load_answer_bytes;
    auto now = now_ns();
    for (size_t i = 0; i < whole; ++i) {
      uint64_t seq = 0;
      std::memcpy(&seq, buf + i * socket_load_answer_bytes, sizeof(seq));
      h.add(static_cast<double>(now - scheduled(seq)) / 1e3);
      ++ok;
    }
    std::memmove(buf, buf + whole * socket_load_answer_bytes,
                 have - whole * socket_load_answer_bytes);
    have -= whole * socket_load_answer_bytes;
  }
  broken = true; // a sender still sending stops
  sender.join();
  auto total = sent.load();
  std::ostringstream out;
  out << total << ' ' << ok << ' ' << (total - std::min(total, ok)) << ' '
      << h.encode();
  return out.str();
}

} // namespace

int socket_load_client_main(const std::string& host, uint16_t port) {
  int fd = -1;
  try {
    fd = connect_tcp(host, port);
  } catch (std::exception& e) {
    std::cerr << "ferry-bench load client: " << e.what() << '\n';
    return 1;
  }
  serve_step_commands(
    [fd](double rate, uint64_t millis) { return socket_step(fd, rate, millis); });
  ::close(fd);
  return 0;
}

} // namespace ferry::bench
