// The TCP relay's sockets and its thread (ferry/test/tcp_relay.hpp).
#include "ferry/test/tcp_relay.hpp"

#include "ferry/test/eventually.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <cstring>
#include <utility>

namespace ferry::test {

namespace {

sockaddr_in loopback(uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

/// Moves what `from` has to `to`; false when either end is gone (a peer
/// that closed first is no signal: MSG_NOSIGNAL, not SIGPIPE).
bool pass(int from, int to) {
  std::array<char, 64 * 1024> buf;
  auto n = ::read(from, buf.data(), buf.size());
  if (n <= 0)
    return n < 0 && errno == EINTR;
  for (ssize_t done = 0; done < n;) {
    auto m = ::send(to, buf.data() + done, static_cast<size_t>(n - done),
                    MSG_NOSIGNAL);
    if (m < 0 && errno == EINTR)
      continue;
    if (m <= 0)
      return false;
    done += m;
  }
  return true;
}

} // namespace

tcp_relay::tcp_relay(uint16_t target_port) : target_port_(target_port) {
  listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_GE(listener_, 0) << std::strerror(errno);
  auto addr = loopback(0);
  EXPECT_EQ(
    ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0)
    << std::strerror(errno);
  EXPECT_EQ(::listen(listener_, 8), 0) << std::strerror(errno);
  socklen_t len = sizeof(addr);
  ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  EXPECT_EQ(::pipe(wake_.data()), 0) << std::strerror(errno);
  thread_ = std::thread{[this] { run(); }};
}

tcp_relay::~tcp_relay() {
  stop_ = true;
  poke();
  thread_.join();
  close_pairs();
  for (int fd : {listener_, wake_[0], wake_[1]})
    ::close(fd);
}

void tcp_relay::cut() {
  cut_requested_ = true;
  poke();
  if (!eventually([this] { return !cut_requested_; },
                  std::chrono::seconds{30}, std::chrono::milliseconds{1}))
    throw std::runtime_error("tcp_relay: the relay thread did not cut");
}

void tcp_relay::freeze() {
  freeze_requested_ = true;
  poke();
  if (!eventually([this] { return !freeze_requested_; },
                  std::chrono::seconds{30}, std::chrono::milliseconds{1}))
    throw std::runtime_error("tcp_relay: the relay thread did not freeze");
}

void tcp_relay::hold_next_answer(std::chrono::milliseconds delay) {
  hold_next_ = delay.count();
}

void tcp_relay::poke() {
  char x = 1;
  static_cast<void>(::write(wake_[1], &x, 1));
}

void tcp_relay::close_pairs() {
  pairs_.insert(pairs_.end(), frozen_.begin(), frozen_.end());
  frozen_.clear();
  for (auto& x : pairs_) {
    ::shutdown(x.in, SHUT_RDWR);
    ::shutdown(x.out, SHUT_RDWR);
    ::close(x.in);
    ::close(x.out);
  }
  pairs_.clear();
}

void tcp_relay::accept_one() {
  int in = ::accept(listener_, nullptr, nullptr);
  if (in < 0)
    return;
  int out = ::socket(AF_INET, SOCK_STREAM, 0);
  auto addr = loopback(target_port_);
  if (out < 0
      || ::connect(out, reinterpret_cast<sockaddr*>(&addr), sizeof(addr))
           != 0) {
    ADD_FAILURE() << "relay cannot reach port " << target_port_ << ": "
                  << std::strerror(errno);
    ::close(in);
    if (out >= 0)
      ::close(out);
    return;
  }
  auto hold = std::chrono::milliseconds{hold_next_.exchange(0)};
  pairs_.push_back({in, out, clock::now() + hold});
  ++connections_;
}

void tcp_relay::run() {
  while (!stop_) {
    if (cut_requested_) {
      close_pairs();
      cut_requested_ = false;
    }
    if (freeze_requested_) {
      frozen_.insert(frozen_.end(), pairs_.begin(), pairs_.end());
      pairs_.clear();
      freeze_requested_ = false;
    }
    // A held answer is not polled for until its time; the poll wakes then.
    std::vector<pollfd> fds{{wake_[0], POLLIN, 0}, {listener_, POLLIN, 0}};
    auto now = clock::now();
    int timeout = -1;
    for (auto& x : pairs_) {
      auto held = x.answers_from > now;
      fds.push_back({x.in, POLLIN, 0});
      fds.push_back({x.out, static_cast<short>(held ? 0 : POLLIN), 0});
      if (held) {
        auto left = std::chrono::ceil<std::chrono::milliseconds>(
          x.answers_from - now);
        auto ms = static_cast<int>(left.count());
        timeout = timeout < 0 ? ms : std::min(timeout, ms);
      }
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0)
      continue;
    if (fds[0].revents != 0) {
      char x[16];
      static_cast<void>(::read(wake_[0], x, sizeof(x)));
    }
    if (fds[1].revents != 0)
      accept_one();
    // A pair one of whose ends is gone is closed at both: the other peer
    // sees its connection end as well.
    std::vector<pair> kept;
    for (size_t i = 0; i < fds.size() - 2; i += 2) {
      int a = pairs_[i / 2].in;
      int b = pairs_[i / 2].out;
      bool ok = true;
      if (fds[i + 2].revents != 0)
        ok = pass(a, b);
      if (ok && fds[i + 3].revents != 0)
        ok = pass(b, a);
      if (ok) {
        kept.push_back(pairs_[i / 2]);
      } else {
        ::close(a);
        ::close(b);
      }
    }
    // Pairs accepted above were not polled yet.
    kept.insert(kept.end(), pairs_.begin() + (fds.size() - 2) / 2,
                pairs_.end());
    pairs_ = std::move(kept);
  }
}

} // namespace ferry::test
