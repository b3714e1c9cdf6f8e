// Two streams over loopback TCP, driven with poll() (see tls_pair.hpp).
#include "tls_pair.hpp"

#include "ferry/errc.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace ferry::test::tls_pair {

namespace {

using status = net::io_result::status;

/// How long a test waits for a socket at most (reached only when hung).
constexpr int deadline_ms = 10'000;

/// Whether this process made the test PKI.
bool pki_made = false;

const std::filesystem::path& pki() {
  static std::filesystem::path dir = [] {
    auto path = std::filesystem::temp_directory_path()
                / ("ferry-tls-streams-" + std::to_string(getpid()));
    std::filesystem::remove_all(path);
    auto command = std::string{FERRY_MAKE_TEST_PKI} + " " + path.string()
                   + " alpha beta gamma"
                     " --dates 20200101000000Z 20200102000000Z expired"
                     " --dates 20400101000000Z 20410101000000Z future"
                     " --days 365 --passphrase secret locked --plain-key"
                     " --ca other mallory"
                     " && cat "
                   + (path / "ca.pem").string() + " "
                   + (path / "other.pem").string() + " > "
                   + (path / "both.pem").string();
    if (std::system(command.c_str()) != 0)
      throw std::runtime_error("make_test_pki.sh failed");
    pki_made = true;
    return path;
  }();
  return dir;
}

/// Removes the test PKI when the tests end.
struct pki_cleanup : testing::Environment {
  void TearDown() override {
    std::error_code ignored;
    if (pki_made)
      std::filesystem::remove_all(pki(), ignored);
  }
};

[[maybe_unused]] auto* cleanup
  = testing::AddGlobalTestEnvironment(new pki_cleanup);

void set_nonblocking(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

short events_of(status state) {
  return state == status::want_write ? POLLOUT : POLLIN;
}

bool waiting(status state) {
  return state == status::want_read || state == status::want_write;
}

} // namespace

std::string file(const std::string& name) {
  return (pki() / name).string();
}

net::tls_options options_of(const std::string& name, const std::string& ca) {
  net::tls_options result;
  result.certificate = file(name + ".pem");
  result.key = file(name + ".key");
  result.ca_file = file(ca);
  result.node_name = name;
  return result;
}

std::shared_ptr<const net::tls_context> context_of(const std::string& name,
                                                   const std::string& ca) {
  auto result = net::tls_context::make(options_of(name, ca));
  if (!result) {
    ADD_FAILURE() << ferry::render(result.error());
    return nullptr;
  }
  return *result;
}

sockets::~sockets() {
  if (client >= 0)
    ::close(client);
  if (server >= 0)
    ::close(server);
}

std::unique_ptr<sockets> connect_pair(int buffer) {
  auto result = std::make_unique<sockets>();
  auto listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (listener < 0
      || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), len) != 0
      || ::listen(listener, 1) != 0
      || ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("cannot listen on loopback");
  result->client = ::socket(AF_INET, SOCK_STREAM, 0);
  if (buffer > 0) {
    ::setsockopt(result->client, SOL_SOCKET, SO_SNDBUF, &buffer,
                 sizeof(buffer));
    ::setsockopt(result->client, SOL_SOCKET, SO_RCVBUF, &buffer,
                 sizeof(buffer));
    // Accepted sockets inherit the listener's buffers.
    ::setsockopt(listener, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof(buffer));
    ::setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
  }
  if (::connect(result->client, reinterpret_cast<sockaddr*>(&addr), len) != 0)
    throw std::runtime_error("cannot connect on loopback");
  result->server = ::accept(listener, nullptr, nullptr);
  ::close(listener);
  if (result->server < 0)
    throw std::runtime_error("cannot accept on loopback");
  int one = 1;
  for (auto fd : {result->client, result->server}) {
    set_nonblocking(fd);
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return result;
}

bool wait_for(int fd, status state) {
  pollfd x{fd, events_of(state), 0};
  return ::poll(&x, 1, deadline_ms) == 1;
}

bool readable_now(int fd) {
  pollfd x{fd, POLLIN, 0};
  return ::poll(&x, 1, 0) == 1;
}

handshake_results handshake(net::stream& client, net::stream& server,
                            const sockets& fds) {
  handshake_results result;
  result.client.state = status::want_write;
  result.server.state = status::want_read;
  auto step = [](net::stream& sut, net::io_result& last, int fd) {
    if (!waiting(last.state))
      return;
    last = sut.handshake();
    if (last.state == status::failed || last.state == status::closed)
      ::shutdown(fd, SHUT_RDWR);
  };
  for (;;) {
    step(client, result.client, fds.client);
    step(server, result.server, fds.server);
    pollfd waits[2];
    nfds_t count = 0;
    if (waiting(result.client.state))
      waits[count++] = pollfd{fds.client, events_of(result.client.state), 0};
    if (waiting(result.server.state))
      waits[count++] = pollfd{fds.server, events_of(result.server.state), 0};
    if (count == 0 || ::poll(waits, count, deadline_ms) <= 0)
      return result;
  }
}

read_outcome read_all(net::stream& sut, int fd, size_t count,
                      size_t buffer_size) {
  read_outcome result;
  std::vector<std::byte> buf(buffer_size);
  while (result.bytes.size() < count) {
    auto want = std::min(buffer_size, count - result.bytes.size());
    result.last = sut.read({buf.data(), want});
    if (result.last.ok()) {
      result.bytes.insert(result.bytes.end(), buf.begin(),
                          buf.begin()
                            + static_cast<ptrdiff_t>(result.last.bytes));
      continue;
    }
    if (!waiting(result.last.state) || !wait_for(fd, result.last.state))
      return result;
  }
  result.last = net::io_result{};
  return result;
}

namespace {

/// Where an end stands in its exchange.
struct progress {
  size_t next = 0;
  size_t offset = 0;
  /// Whether the stream holds bytes or pieces are left (`write` said
  /// `want_*`), and for which readiness.
  status write_wait = status::ok;
  status read_wait = status::ok;
  bool sent_all = false;
};

/// Writes what `x` has left; false on a failure.
bool write_step(end& x, progress& p) {
  if (p.sent_all)
    return true;
  std::vector<net::piece> rest;
  if (p.next < x.pieces.size()) {
    rest.push_back(x.pieces[p.next].subspan(p.offset));
    rest.insert(rest.end(),
                x.pieces.begin() + static_cast<ptrdiff_t>(p.next) + 1,
                x.pieces.end());
  }
  auto result = x.sut->write(rest);
  auto taken = result.bytes;
  while (taken > 0) {
    auto left = x.pieces[p.next].size() - p.offset;
    if (taken < left) {
      p.offset += taken;
      break;
    }
    taken -= left;
    ++p.next;
    p.offset = 0;
  }
  if (result.ok()) {
    p.write_wait = status::ok;
    p.sent_all = p.next == x.pieces.size();
    return true;
  }
  if (waiting(result.state)) {
    p.write_wait = result.state;
    return true;
  }
  ADD_FAILURE() << "write: " << result.error;
  return false;
}

/// Reads what has come for `x`; false on a failure or an early end.
bool read_step(end& x, progress& p, std::vector<std::byte>& buf) {
  while (x.received.size() < x.expected) {
    auto result = x.sut->read(buf);
    if (result.ok()) {
      x.received.insert(x.received.end(), buf.begin(),
                        buf.begin() + static_cast<ptrdiff_t>(result.bytes));
      continue;
    }
    if (waiting(result.state)) {
      p.read_wait = result.state;
      return true;
    }
    ADD_FAILURE() << "read after " << x.received.size() << " of " << x.expected
                  << " bytes: "
                  << (result.state == status::closed ? "closed" : result.error);
    return false;
  }
  p.read_wait = status::ok;
  return true;
}

} // namespace

bool exchange(end& a, end& b) {
  end* ends[2] = {&a, &b};
  progress states[2];
  std::vector<std::byte> bufs[2] = {std::vector<std::byte>(a.buffer_size),
                                    std::vector<std::byte>(b.buffer_size)};
  for (;;) {
    for (int i = 0; i < 2; ++i)
      if (!write_step(*ends[i], states[i])
          || !read_step(*ends[i], states[i], bufs[i]))
        return false;
    pollfd waits[2];
    nfds_t count = 0;
    for (int i = 0; i < 2; ++i) {
      short events = 0;
      if (!states[i].sent_all && waiting(states[i].write_wait))
        events |= events_of(states[i].write_wait);
      if (ends[i]->received.size() < ends[i]->expected)
        events |= events_of(states[i].read_wait);
      if (events != 0)
        waits[count++] = pollfd{ends[i]->fd, events, 0};
    }
    if (count == 0)
      return states[0].sent_all && states[1].sent_all;
    if (::poll(waits, count, deadline_ms) <= 0) {
      ADD_FAILURE() << "exchange: no progress for " << deadline_ms << " ms";
      return false;
    }
  }
}

std::vector<net::piece> cut(std::span<const std::byte> bytes,
                            const std::vector<size_t>& sizes) {
  std::vector<net::piece> result;
  size_t i = 0;
  while (!bytes.empty()) {
    auto n = std::min(sizes[i++ % sizes.size()], bytes.size());
    result.push_back(bytes.first(n));
    bytes = bytes.subspan(n);
  }
  return result;
}

std::vector<std::byte> pattern(size_t n, unsigned seed) {
  std::vector<std::byte> result(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : result) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<std::byte>(x >> 24);
  }
  return result;
}

} // namespace ferry::test::tls_pair
