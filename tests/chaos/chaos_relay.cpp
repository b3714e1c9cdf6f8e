// A delaying TCP relay for the chaos run: the link whose delay a fault
// raises.
//
// `chaos_relay <address> <port> <target-port>` listens on <address>:<port>
// and joins each connection made there to a new connection to
// 127.0.0.1:<target-port> (the node of the same host). Bytes go both ways
// unchanged and in order; while a delay is set, each chunk read is passed on
// `mean ± jitter` ms (uniform) after it arrived, but never before the chunk
// read before it. A peer closing its side closes the other once what it
// sent has passed; an error on either side resets both. It prints
// "listening" once it accepts, then answers each line of stdin:
//   delay <mean-ms> <jitter-ms>   "delay <mean> <jitter>" (0 0: none)
// and exits when stdin closes. Not a transport: the nodes speak ferry's
// wire through it as they would directly.
#include "ferry/test/loopback.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock = std::chrono::steady_clock;

std::atomic<int> mean_ms{0};
std::atomic<int> jitter_ms{0};

/// One direction of a relayed connection: chunks waiting for their time.
class pipe {
public:
  pipe(int from, int to) : from_(from), to_(to) {
  }

  /// Reads from `from` until it ends; queues each chunk with its time.
  void read() {
    std::mt19937_64 gen{std::random_device{}()};
    auto last = clock::now();
    std::vector<char> buf(64 * 1024);
    for (;;) {
      auto n = ::recv(from_, buf.data(), buf.size(), 0);
      auto mean = mean_ms.load();
      auto jitter = jitter_ms.load();
      auto at = clock::now();
      if (mean > 0) {
        std::uniform_int_distribution<int> pick{-jitter, jitter};
        at += std::chrono::milliseconds{std::max(0, mean + pick(gen))};
      }
      last = std::max(last, at);
      std::lock_guard<std::mutex> guard{mtx_};
      if (n <= 0) {
        queue_.push_back({last, {}, n == 0 ? ended::closed : ended::failed});
        cv_.notify_all();
        return;
      }
      queue_.push_back({last, std::string(buf.data(), n), ended::no});
      cv_.notify_all();
    }
  }

  /// Writes each chunk to `to` at its time; returns how the input ended.
  bool write() {
    for (;;) {
      chunk next;
      {
        std::unique_lock<std::mutex> guard{mtx_};
        cv_.wait(guard, [this] { return !queue_.empty(); });
        next = std::move(queue_.front());
        queue_.pop_front();
      }
      std::this_thread::sleep_until(next.at);
      if (next.end != ended::no)
        return next.end == ended::closed;
      size_t done = 0;
      while (done < next.bytes.size()) {
        auto n = ::send(to_, next.bytes.data() + done,
                        next.bytes.size() - done, MSG_NOSIGNAL);
        if (n <= 0)
          return false;
        done += static_cast<size_t>(n);
      }
    }
  }

private:
  enum class ended { no, closed, failed };

  struct chunk {
    clock::time_point at;
    std::string bytes;
    ended end = ended::no;
  };

  int from_;
  int to_;
  std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<chunk> queue_;
};

/// A relayed connection; its sockets close with the last thread using it.
struct connection {
  int a;
  int b;
  ~connection() {
    ::close(a);
    ::close(b);
  }
};

void pass(std::shared_ptr<connection> conn, int from, int to) {
  auto p = std::make_shared<pipe>(from, to);
  std::thread reader{[p, conn] { p->read(); }};
  if (p->write()) {
    ::shutdown(to, SHUT_WR);
  } else {
    ::shutdown(from, SHUT_RDWR);
    ::shutdown(to, SHUT_RDWR);
  }
  reader.join();
}

int connect_target(uint16_t port) {
  int fd = ferry::test::connect_loopback(port);
  int one = 1;
  if (fd >= 0)
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: chaos_relay <address> <port> <target-port>\n";
    return 2;
  }
  auto target = static_cast<uint16_t>(std::stoul(argv[3]));
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoul(argv[2])));
  if (::inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1
      || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0
      || ::listen(listener, 16) != 0) {
    std::cerr << "chaos_relay: cannot listen on " << argv[1] << ":" << argv[2]
              << ": " << std::strerror(errno) << '\n';
    return 1;
  }
  std::thread{[listener, target] {
    for (;;) {
      int in = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (in < 0)
        return;
      int nodelay = 1;
      ::setsockopt(in, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof(nodelay));
      int out = connect_target(target);
      if (out < 0) {
        ::close(in);
        continue;
      }
      std::shared_ptr<connection> conn{new connection{in, out}};
      std::thread{pass, conn, in, out}.detach();
      std::thread{pass, conn, out, in}.detach();
    }
  }}.detach();
  std::cout << "listening" << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in{line};
    std::string command;
    int mean = 0;
    int jitter = 0;
    in >> command >> mean >> jitter;
    if (command != "delay") {
      std::cout << "fail unknown command: " << line << std::endl;
      continue;
    }
    mean_ms = mean;
    jitter_ms = std::min(jitter, mean);
    std::cout << "delay " << mean << " " << jitter << std::endl;
  }
  return 0;
}
