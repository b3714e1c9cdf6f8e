// A connection's sending (transport/connection) over a stream that keeps
// bytes of its own: a TLS stream takes a frame whole into its record buffer
// and may still report the socket full (`want_write`). The connection must
// then drop the frame (it is the stream's), wait for the socket, let the
// stream flush, and go on with the frames queued behind it, in order. And
// frames sent before the stream is ready follow the preface.
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

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

namespace ferry::detail::net {
namespace {

/// A plain stream with a buffer of its own, as a TLS stream has: every
/// write takes all of its pieces into the buffer; the second one (the
/// first after the preface) then reports the socket full without trying
/// it, the others flush the buffer.
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
    if (++writes_ == 2) {
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
  int writes_ = 0;
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

/// A connection of ferry's own over a holding stream, and the socket of
/// its peer.
class connection_test : public ::testing::Test {
protected:
  void SetUp() override {
    namespace asio = boost::asio;
    asio::ip::tcp::socket sock{*ioc_};
    {
      asio::ip::tcp::acceptor acceptor{
        *ioc_, asio::ip::tcp::endpoint{asio::ip::address_v4::loopback(), 0}};
      peer_ = ferry::test::connect_loopback(acceptor.local_endpoint().port());
      ASSERT_GE(peer_, 0);
      sock = acceptor.accept();
    }
    stream_maker streams;
    streams.make = [](int fd, bool,
                      bool) -> caf::expected<std::unique_ptr<stream>> {
      return std::unique_ptr<stream>{new holding_stream(fd)};
    };
    conn_ = connection::make(std::move(sock), true, streams, {},
                             std::make_shared<quiet_handler>());
  }

  void TearDown() override {
    if (peer_ >= 0)
      ::close(peer_);
    if (stuck_) {
      // The I/O thread cannot be stopped: it, its context and the helper
      // threads are left to the process's end.
      io_.detach();
      for (auto& x : helpers_)
        x.detach();
      return;
    }
    for (auto& x : helpers_)
      x.join();
    if (conn_)
      conn_->close(false);
    ioc_->stop();
    if (io_.joinable())
      io_.join();
    conn_.reset();
    delete ioc_;
  }

  /// Starts the connection and its I/O thread.
  void start() {
    conn_->start();
    io_ = std::thread{[ctx = ioc_] {
      ctx->run_for(5s);
    }};
  }

  /// Reads `want` bytes from the peer's socket (fewer: the connection is
  /// stuck).
  std::vector<std::byte> expect_bytes(size_t want) {
    auto got = read_bytes(peer_, want, 3s);
    stuck_ = got.size() != want;
    return got;
  }

  boost::asio::io_context* ioc_ = new boost::asio::io_context{1};
  int peer_ = -1;
  std::shared_ptr<connection> conn_;
  std::thread io_;
  std::vector<std::thread> helpers_;
  bool stuck_ = false;
};

TEST_F(connection_test,
       AFrameTheStreamTookWholeWhileTheSocketWasFullLeavesTheQueue) {
  start();
  auto preface = expect_bytes(wire::preface.size());
  ASSERT_EQ(preface.size(), wire::preface.size());
  EXPECT_EQ(std::memcmp(preface.data(), wire::preface.data(), preface.size()),
            0);
  // The first frame is the stream's second write, which this thread makes
  // itself: taken whole and held, "the socket full"; it arrives once the
  // I/O thread has written again (the stream's flush).
  conn_->send(beat());
  auto first = expect_bytes(wire::header_size);
  ASSERT_EQ(first.size(), wire::header_size);
  // The frames after it go out as they come (from a thread of their own: a
  // connection spinning on a frame it no longer has holds its send lock).
  constexpr size_t frames = 2;
  helpers_.emplace_back([conn = conn_] {
    for (size_t i = 0; i < frames; ++i)
      conn->send(beat());
  });
  auto got = expect_bytes(frames * wire::header_size);
  EXPECT_EQ(got.size(), frames * wire::header_size)
    << "the frames sent after the held one never went out";
}

TEST_F(connection_test, FramesSentBeforeTheStreamIsReadyFollowThePreface) {
  constexpr size_t frames = 2;
  for (size_t i = 0; i < frames; ++i)
    conn_->send(beat());
  start();
  auto got = expect_bytes(wire::preface.size() + frames * wire::header_size);
  ASSERT_EQ(got.size(), wire::preface.size() + frames * wire::header_size);
  EXPECT_EQ(std::memcmp(got.data(), wire::preface.data(), wire::preface.size()),
            0);
}

} // namespace
} // namespace ferry::detail::net
