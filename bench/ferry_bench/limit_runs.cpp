// The limit rows: what the machine allows without actors, measured in the
// same sets as the rows compared with them.
//
// - `socket` (tcp sets): two processes and one blocking TCP connection on
//   loopback, TCP_NODELAY on both ends. The peer (`ferry-bench
//   --peer=socket`) listens on a loopback port, prints "port <N>", and
//   reads messages on one thread: a 16-byte header (payload size, kind)
//   and the payload. It reads through a 64 KiB buffer (many small messages
//   per read call; a larger payload goes on into one buffer kept for the
//   connection's life), reads the first and last byte like the actors'
//   sink, answers a request (kind 1) with its CLOCK_MONOTONIC time and
//   acknowledges every k-th one-way message with the count (8 bytes each).
//   Its stdin takes the peers' commands (`reset k`, `rss`); `reset` only
//   runs between rounds, when nothing is in flight. The sender here runs
//   the same stream trial as the actor rows (stream_trial.hpp: same window,
//   acknowledgement batches and rounds) from the same kind of prebuilt
//   buffer; one-way messages that fit gather in a 64 KiB buffer written
//   when full and before waiting for an acknowledgement (as CAF's
//   middleman writes what a turn of its loop gathered), larger ones go out
//   with one writev of header and payload, and a request goes out at once.
// - `memcpy` (ipc sets): one warm memcpy of the payload size per round
//   (`memcpy_us`, the same figure as the machine block's), reported as
//   copies per second; p50/p99 are the per-copy times.
//
// Groups and trials run on the driver's main thread only.
#include "bench_types.hpp"
#include "child.hpp"
#include "driver.hpp"
#include "machine.hpp"
#include "stream_trial.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

namespace ferry::bench {

namespace {

/// The header of every message on the socket.
struct frame_header {
  uint64_t size = 0;
  /// 0: one-way, 1: request.
  uint64_t kind = 0;
};

std::string errno_text(const char* what) {
  return std::string{what} + ": " + std::strerror(errno);
}

/// Writes every byte of `iov` (blocking); false on failure.
bool write_all(int fd, iovec* iov, int count) {
  while (count > 0) {
    auto n = ::writev(fd, iov, count);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    auto left = static_cast<size_t>(n);
    while (count > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  return true;
}

/// Reads exactly `size` bytes (blocking); false on failure or end of stream.
bool read_all(int fd, void* buf, size_t size) {
  auto* pos = static_cast<char*>(buf);
  while (size > 0) {
    auto n = ::read(fd, pos, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    pos += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void set_nodelay(int fd) {
  int on = 1;
  static_cast<void>(::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)));
}

/// Waits up to `wait` for `fd` to be readable: 1 readable, 0 not, -1 error.
int wait_readable(int fd, std::chrono::milliseconds wait) {
  pollfd pfd{fd, POLLIN, 0};
  for (;;) {
    auto n = ::poll(&pfd, 1, static_cast<int>(wait.count()));
    if (n < 0 && errno == EINTR)
      continue;
    return n < 0 ? -1 : (n > 0 ? 1 : 0);
  }
}

/// Bytes a side of the socket row moves per system call at most when it
/// gathers small messages.
constexpr size_t gather_bytes = 64 * 1024;

/// The sending end of the socket row.
class socket_channel final : public channel {
public:
  socket_channel(int fd, std::shared_ptr<const std::vector<char>> payload)
    : fd_(fd), payload_(std::move(payload)) {
    out_.reserve(gather_bytes);
  }

  void load() override {
    // The payload is prebuilt, as the actor rows' caf::message is.
  }

  void unload() override {
    // nop
  }

  bool send() override {
    frame_header h{payload_->size(), 0};
    if (sizeof(h) + payload_->size() > gather_bytes)
      return flush() && write_frame(0);
    auto* pos = reinterpret_cast<const char*>(&h);
    out_.insert(out_.end(), pos, pos + sizeof(h));
    out_.insert(out_.end(), payload_->begin(), payload_->end());
    return out_.size() + sizeof(h) + payload_->size() <= gather_bytes
           || flush();
  }

  std::optional<uint64_t> next_ack(std::chrono::milliseconds wait) override {
    if (!flush())
      return std::nullopt;
    auto ready = wait_readable(fd_, wait);
    if (ready < 0)
      error_ = errno_text("poll");
    if (ready <= 0)
      return std::nullopt;
    uint64_t count = 0;
    if (!read_all(fd_, &count, sizeof(count))) {
      error_ = "the socket peer closed the connection";
      return std::nullopt;
    }
    return count;
  }

  bool round_trip(double timeout_seconds) override {
    if (!write_frame(1))
      return false;
    auto wait = std::chrono::milliseconds{
      static_cast<int64_t>(timeout_seconds * 1000)};
    if (wait_readable(fd_, wait) <= 0) {
      error_ = "no reply from the socket peer";
      return false;
    }
    uint64_t t = 0;
    if (!read_all(fd_, &t, sizeof(t))) {
      error_ = "the socket peer closed the connection";
      return false;
    }
    return true;
  }

private:
  /// Writes the gathered messages.
  bool flush() {
    if (out_.empty())
      return true;
    iovec iov{out_.data(), out_.size()};
    out_.clear();
    if (!write_all(fd_, &iov, 1)) {
      error_ = errno_text("writev");
      return false;
    }
    return true;
  }

  bool write_frame(uint64_t kind) {
    frame_header h{payload_->size(), kind};
    iovec iov[2] = {{&h, sizeof(h)},
                    {const_cast<char*>(payload_->data()), payload_->size()}};
    if (!write_all(fd_, iov, 2)) {
      error_ = errno_text("writev");
      return false;
    }
    return true;
  }

  int fd_;
  std::shared_ptr<const std::vector<char>> payload_;
  std::vector<char> out_;
};

/// The socket peer's reading end: many small messages per read call.
class frame_reader {
public:
  explicit frame_reader(int fd) : fd_(fd), in_(gather_bytes) {
    // nop
  }

  /// Reads the next header; false at the end of the stream.
  bool header(frame_header& h) {
    if (!fill(sizeof(h)))
      return false;
    std::memcpy(&h, in_.data() + begin_, sizeof(h));
    begin_ += sizeof(h);
    return true;
  }

  /// Returns the next `size` bytes, valid until the next call; nullptr at
  /// the end of the stream.
  const char* payload(size_t size) {
    if (size <= in_.size()) {
      if (!fill(size))
        return nullptr;
      auto* result = in_.data() + begin_;
      begin_ += size;
      return result;
    }
    // Larger than the read buffer: what it holds, then the rest directly.
    if (big_.size() < size)
      big_.resize(size);
    auto held = end_ - begin_;
    std::memcpy(big_.data(), in_.data() + begin_, held);
    begin_ = end_ = 0;
    if (!read_all(fd_, big_.data() + held, size - held))
      return nullptr;
    return big_.data();
  }

private:
  /// Makes `n` bytes (at most the buffer's size) available from `begin_`.
  bool fill(size_t n) {
    if (end_ - begin_ >= n)
      return true;
    std::memmove(in_.data(), in_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    while (end_ < n) {
      auto got = ::read(fd_, in_.data() + end_, in_.size() - end_);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        return false;
      end_ += static_cast<size_t>(got);
    }
    return true;
  }

  int fd_;
  std::vector<char> in_;
  size_t begin_ = 0;
  size_t end_ = 0;
  std::vector<char> big_;
};

class socket_group final : public group {
public:
  explicit socket_group(const bench_env& env) {
    std::vector<std::string> args{"--peer=socket"};
    args.insert(args.end(), env.peer_place.begin(), env.peer_place.end());
    args.push_back("--address=" + env.peer_address);
    peer_ = std::make_unique<child>(args);
    auto port = peer_->wait_for("port ", std::chrono::seconds{30});
    if (!port)
      throw std::runtime_error("the socket peer did not start");
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0)
      throw std::runtime_error(errno_text("socket"));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    if (::inet_pton(AF_INET, env.peer_address.c_str(), &addr.sin_addr) != 1)
      throw std::runtime_error("not an IPv4 address: " + env.peer_address);
    addr.sin_port = htons(static_cast<uint16_t>(std::stoi(*port)));
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
      throw std::runtime_error(errno_text("connect to the socket peer"));
    set_nodelay(fd_);
  }

  ~socket_group() override {
    if (fd_ >= 0)
      ::close(fd_);
    peer_.reset();
  }

  std::unique_ptr<trial> start(const cell& c, const run_params& p) override {
    if (c.type != payload_type::bytes)
      throw std::runtime_error("the socket row sends bytes only");
    // The bytes raw-caf sends (one copy in the process, not one per row).
    auto held = std::make_shared<const caf::message>(bytes_message(c.size,
                                                                   true));
    std::shared_ptr<const std::vector<char>> payload{
      held, &held->get_as<std::vector<char>>(0)};
    trial_hooks hooks;
    hooks.reset = [this](uint64_t ack_every) {
      return peer_->ask("reset " + std::to_string(ack_every), "ok")
        .has_value();
    };
    hooks.peak_rss = [this] {
      auto answer = peer_->ask("rss", "rss ");
      return answer ? std::stod(*answer) : -1.0;
    };
    return make_stream_trial(
      std::make_unique<socket_channel>(fd_, std::move(payload)), c.pat, p,
      std::move(hooks));
  }

  measurement handoff(const cell&, const run_params&) override {
    measurement m;
    m.error = "the socket row has no hand-off";
    return m;
  }

private:
  std::unique_ptr<child> peer_;
  int fd_ = -1;
};

/// Rounds of one warm memcpy each (see the file comment).
class memcpy_trial final : public trial {
public:
  memcpy_trial(uint64_t size, const run_params& p) : size_(size), p_(p) {
    // nop
  }

  bool warm_up() override {
    static_cast<void>(memcpy_us(size_));
    return true;
  }

  int rounds() const override { return p_.repeats; }

  bool round() override {
    auto us = memcpy_us(size_);
    if (us <= 0) {
      m_.error = "memcpy took no measurable time";
      return false;
    }
    times_.push_back(us);
    rates_.push_back(1e6 / us);
    m_.messages += 1;
    m_.seconds += us / 1e6;
    return true;
  }

  measurement result() override {
    return summarize_rounds(m_, rates_, times_);
  }

private:
  uint64_t size_;
  run_params p_;
  std::vector<double> times_;
  std::vector<double> rates_;
  measurement m_;
};

class memcpy_group final : public group {
public:
  std::unique_ptr<trial> start(const cell& c, const run_params& p) override {
    return std::make_unique<memcpy_trial>(c.size, p);
  }

  measurement handoff(const cell&, const run_params&) override {
    measurement m;
    m.error = "the memcpy row has no hand-off";
    return m;
  }
};

/// The socket peer's receiving loop (see the file comment).
void serve_socket(int fd, std::atomic<uint64_t>& count,
                  std::atomic<uint64_t>& ack_every) {
  frame_reader in{fd};
  uint64_t checksum = 0;
  frame_header h;
  while (in.header(h)) {
    auto* buf = in.payload(static_cast<size_t>(h.size));
    if (buf == nullptr)
      break;
    if (h.size > 0)
      checksum += static_cast<unsigned char>(buf[0])
                  + static_cast<unsigned char>(buf[h.size - 1]);
    uint64_t answer = 0;
    if (h.kind == 1) {
      answer = now_ns();
    } else {
      auto n = count.fetch_add(1, std::memory_order_relaxed) + 1;
      if (n % ack_every.load(std::memory_order_relaxed) != 0)
        continue;
      answer = n;
    }
    iovec iov{&answer, sizeof(answer)};
    if (!write_all(fd, &iov, 1))
      break;
  }
  // Keeps the reads of first and last bytes observable.
  asm volatile("" : : "r"(checksum) : "memory");
}

} // namespace

std::unique_ptr<group> make_limit_group(transport tr, const bench_env& env) {
  if (tr == transport::tcp || tr == transport::netns)
    return std::make_unique<socket_group>(env);
  if (tr == transport::ipc)
    return std::make_unique<memcpy_group>();
  throw std::runtime_error("no limit row for " + to_string(tr));
}

int socket_peer_main(const std::string& address) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) {
    std::cerr << "ferry-bench peer: not an IPv4 address: " << address << '\n';
    return 2;
  }
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) {
    std::cerr << "ferry-bench peer: " << errno_text("socket") << '\n';
    return 1;
  }
  socklen_t len = sizeof(addr);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0
      || ::listen(listener, 1) != 0
      || ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len)
           != 0) {
    std::cerr << "ferry-bench peer: " << errno_text("listen") << '\n';
    ::close(listener);
    return 1;
  }
  std::cout << "port " << ntohs(addr.sin_port) << std::endl;
  std::atomic<uint64_t> count{0};
  std::atomic<uint64_t> ack_every{1};
  std::atomic<int> conn{-1};
  std::thread reader{[&] {
    int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
      return;
    set_nodelay(fd);
    conn = fd;
    serve_socket(fd, count, ack_every);
  }};
  auto rc = serve_commands([&](uint64_t k) {
    count = 0;
    ack_every = std::max<uint64_t>(1, k);
    return true;
  });
  // stdin closed: end the reader (blocked in accept or read) and leave.
  ::shutdown(listener, SHUT_RDWR);
  if (auto fd = conn.load(); fd >= 0)
    ::shutdown(fd, SHUT_RDWR);
  reader.join();
  if (auto fd = conn.load(); fd >= 0)
    ::close(fd);
  ::close(listener);
  return rc;
}

} // namespace ferry::bench
