// A connection's sending (transport/connection) over a stream that keeps
// bytes of its own: a TLS stream takes a frame whole into its record buffer
// and may still report the socket full (`want_write`). The connection must
// then drop the frame (it is the stream's), wait for the socket, let the
// stream flush, and go on with the frames queued behind it, in order.
#include "transport/connection.hpp"
#include "transport/plain_stream.hpp"
#include "wire/frame.hpp"

#include "ferry/test/loopback.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

namespace ferry::detail::net {
namespace {

/// A plain stream with a buffer of its own, as a TLS stream has: every
/// write takes all of its pieces into the buffer; the first one then
/// reports the socket full without trying it, the others flush the buffer.
class holding_stream final : public stream {
public:
  explicit holding_stream(int fd) : inner_(fd) {}

  io_result handshake() override { return {}; }

  io_result read(std::span<std::byte> out) override { return inner_.read(out); }

  io_result write(std::span<const piece> pieces) override {
    io_result result;
    for (auto& x : pieces) {
      held_.insert(held_.end(), x.begin(), x.end());
      result.bytes += x.size();
    }
    if (first_) {
      first_ = false;
      result.state = io_result::status::want_write;
      return result;
    }
    while (!held_.empty()) {
      piece rest{held_.data(), held_.size()};
      auto r = inner_.write({&rest, 1});
      held_.erase(held_.begin(),
                  held_.begin() + static_cast<ptrdiff_t>(r.bytes));
      if (!r.ok()) {
        r.bytes = result.bytes;
        return r;
      }
    }
    return result;
  }

  void shutdown() noexcept override { inner_.shutdown(); }

  const char* kind() const noexcept override { return "holding"; }

private:
  plain_stream inner_;
  std::vector<std::byte> held_;
  bool first_ = true;
};

/// Hears nothing but the end.
class quiet_handler final : public connection::handler {
public:
  uint64_t max_body(wire::frame_type) const override { return 0; }
  caf::error on_frame(wire::frame_type, std::span<const std::byte>) override {
    return {};
  }
  caf::error on_message(wire_message&&) override { return {}; }
  chunk_place chunk_landing(uint64_t, uint64_t) override { return {}; }
  caf::error on_chunk(uint64_t, wire_bytes, bool) override { return {}; }
  import_landing* imports() override { return nullptr; }
  void on_open(connection&) override {}
  void on_closed(connection&, const caf::error&) override {}
};

/// Reads from `fd` until `want` bytes arrived or `timeout` passed; returns
/// what arrived.
std::vector<std::byte> read_bytes(int fd, size_t want,
                                  std::chrono::milliseconds timeout) {
  std::vector<std::byte> result;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::byte buf[4096];
  while (result.size() < want && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0)
      continue;
    auto n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0)
      break;
    result.insert(result.end(), buf, buf + n);
  }
  return result;
}

/// A heartbeat frame (a header, no body).
wire::out_frame beat() {
  wire::out_frame result{wire::frame_type::heartbeat};
  result.finish();
  return result;
}

TEST(connection, AFrameTheStreamTookWholeWhileTheSocketWasFullLeavesTheQueue) {
  namespace asio = boost::asio;
  // Left behind, not destroyed, when the I/O thread never comes back.
  auto* ioc = new asio::io_context{1};
  asio::ip::tcp::socket sock{*ioc};
  int peer = -1;
  {
    asio::ip::tcp::acceptor acceptor{
      *ioc, asio::ip::tcp::endpoint{asio::ip::address_v4::loopback(), 0}};
    peer = ferry::test::connect_loopback(acceptor.local_endpoint().port());
    ASSERT_GE(peer, 0);
    sock = acceptor.accept();
  }
  stream_maker streams;
  streams.make = [](int fd, bool,
                    bool) -> caf::expected<std::unique_ptr<stream>> {
    return std::unique_ptr<stream>{new holding_stream(fd)};
  };
  auto conn = connection::make(std::move(sock), true, streams, {},
                               std::make_shared<quiet_handler>());
  conn->start();
  std::thread io{[ioc] {
    ioc->run_for(5s);
  }};
  // The preface is the stream's first write: taken whole and held, "the
  // socket full"; the stream sends it once the connection writes again.
  auto preface = read_bytes(peer, wire::preface.size(), 3s);
  ASSERT_EQ(preface.size(), wire::preface.size());
  EXPECT_EQ(std::memcmp(preface.data(), wire::preface.data(), preface.size()),
            0);
  // Then the frames go out as they come (from a thread of their own: a
  // connection spinning on a frame it no longer has holds its send lock).
  constexpr size_t frames = 3;
  std::thread sender{[conn] {
    for (size_t i = 0; i < frames; ++i)
      conn->send(beat());
  }};
  auto got = read_bytes(peer, frames * wire::header_size, 3s);
  ::close(peer);
  if (got.size() != frames * wire::header_size) {
    // The I/O thread cannot be stopped: it and the sender are left to the
    // process's end, with the context.
    io.detach();
    sender.detach();
    FAIL() << "the peer got " << got.size() << " of "
           << frames * wire::header_size
           << " bytes of frames sent after the held preface";
  }
  sender.join();
  conn->close(false);
  ioc->stop();
  io.join();
  conn.reset();
  delete ioc;
}

} // namespace
} // namespace ferry::detail::net
