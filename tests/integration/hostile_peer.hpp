// A peer that does not follow ferry's rules, for the hostile_* tests: the
// test process speaks ferry's wire by hand over a TCP socket of its own
// (white-box: it writes and reads frames with the framework's wire/ and
// transport/ code) to a ferry node in a child process (ferry_test_node,
// node "B", no store, msgpack only), as node "rogue". `hostile_fixture`
// starts that node, handshakes, sends hand-made frames and reads what the
// node answers and its link stats; `rogue_connection` is one such socket.
// One test thread uses a fixture.
#pragma once

#include "test_types.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/test/eventually.hpp"
#include "ferry/test/child_process.hpp"
#include "ferry/test/mentions.hpp"

#include "transport/frame_reader.hpp"
#include "wire/control.hpp"
#include "wire/frame.hpp"
#include "wire/message.hpp"
#include "wire/out_frame.hpp"

#include "ferry/serializers/payload.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ferry::test {

using namespace std::chrono_literals;
using namespace ferry::detail;

/// One frame the node sent "rogue": its type and body (a message frame's
/// message, each message of a batch on its own).
struct received {
  wire::frame_type type = wire::frame_type::heartbeat;
  std::vector<std::byte> body;
  wire_message msg;

  /// Reads the body as the control frame `T`.
  template <class T>
  std::optional<T> as() const {
    if (type != T::type)
      return std::nullopt;
    wire::reader in{body, wire::name_of(type)};
    T x;
    if (auto err = x.read(in)) {
      ADD_FAILURE() << ferry::render(err);
      return std::nullopt;
    }
    return x;
  }
};

/// A TCP connection to a node, written and read by hand.
class rogue_connection : private net::frame_sink {
public:
  /// Connects to 127.0.0.1:`port`.
  explicit rogue_connection(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
              0)
      << std::strerror(errno);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }

  ~rogue_connection() override {
    if (fd_ >= 0)
      ::close(fd_);
  }

  rogue_connection(const rogue_connection&) = delete;
  rogue_connection& operator=(const rogue_connection&) = delete;

  /// Writes `bytes` whole (false once the node closed the connection).
  bool send_raw(std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
      auto n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0)
        return false;
      bytes = bytes.subspan(static_cast<size_t>(n));
    }
    return true;
  }

  /// Writes `frame`.
  bool send(const wire::out_frame& frame) {
    return send_raw(frame.flatten());
  }

  /// Writes the control frame `x`.
  template <class T>
  bool send_control(const T& x) {
    return send(wire::make_frame(x));
  }

  /// Writes a message frame holding `msg`.
  bool send_message(const wire_message& msg) {
    return send(message_frame(msg));
  }

  /// Returns the next frame the node sent, waiting up to `timeout`;
  /// nothing once the connection closed (`closed()`) or the time passed.
  std::optional<received> next(std::chrono::milliseconds timeout = 10s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (queue_.empty() && !closed_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0)
        continue;
      auto into = reader_.buffer();
      auto n = ::recv(fd_, into.data(), into.size(), 0);
      if (n <= 0) {
        closed_ = true;
        break;
      }
      if (auto err = reader_.consume(static_cast<size_t>(n), *this)) {
        ADD_FAILURE() << "the node broke ferry's framing: "
                      << ferry::render(err);
        closed_ = true;
      }
    }
    if (queue_.empty())
      return std::nullopt;
    auto result = std::move(queue_.front());
    queue_.pop_front();
    return result;
  }

  /// Returns the next frame of type `type`, skipping others (heartbeats,
  /// credit) on the way; nothing after `timeout`.
  std::optional<received> next_of(wire::frame_type type,
                                  std::chrono::milliseconds timeout = 10s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        return std::nullopt;
      auto x = next(left);
      if (!x)
        return std::nullopt;
      if (x->type == type)
        return x;
    }
  }

  /// Returns whether the node closed the connection (seen by `next`).
  bool closed() const { return closed_; }

  /// Waits up to `timeout` for the node to close the connection, reading
  /// (and dropping) what it sends meanwhile; returns whether it did.
  bool await_close(std::chrono::milliseconds timeout = 10s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!closed_ && std::chrono::steady_clock::now() < deadline)
      next(50ms);
    return closed_;
  }

private:
  uint64_t max_body(wire::frame_type) const override {
    return uint64_t{1} << 32;
  }

  caf::error on_frame(wire::frame_type type,
                      std::span<const std::byte> body) override {
    if (type == wire::frame_type::batch) {
      wire::reader in{body, "batch"};
      wire_batch batch;
      if (auto err = read_batch(in, batch, nullptr))
        return err;
      for (auto& msg : batch.messages) {
        received x;
        x.type = wire::frame_type::message;
        x.msg = std::move(msg);
        queue_.push_back(std::move(x));
      }
      return caf::none;
    }
    received x;
    x.type = type;
    x.body.assign(body.begin(), body.end());
    queue_.push_back(std::move(x));
    return caf::none;
  }

  caf::error on_message(wire_message&& msg) override {
    received x;
    x.type = wire::frame_type::message;
    x.msg = std::move(msg);
    queue_.push_back(std::move(x));
    return caf::none;
  }

  net::chunk_place chunk_landing(uint64_t, uint64_t) override { return {}; }

  caf::error on_chunk(uint64_t request, wire_bytes data, bool) override {
    received x;
    x.type = wire::frame_type::chunk;
    x.body.resize(8);
    std::memcpy(x.body.data(), &request, 8);
    x.body.insert(x.body.end(), data.bytes().begin(), data.bytes().end());
    queue_.push_back(std::move(x));
    return caf::none;
  }

  import_landing* imports() override { return nullptr; }

  int fd_ = -1;
  net::frame_reader reader_{true};
  std::deque<received> queue_;
  bool closed_ = false;
};

/// A ferry node "B" in a child process and, in this process, a hand-made
/// peer that reaches it as node "rogue" without ferry's rules.
class hostile_fixture : public testing::Test {
protected:
  /// Starts the peer with `extra_flags` after the fixture's own.
  explicit hostile_fixture(std::vector<std::string> extra_flags = {}) {
    std::vector<std::string> flags{"--ferry.node-name=B",
                                   "--ferry.store.disabled",
                                   "--ferry.link.deserializers=[\"msgpack\"]"};
    flags.insert(flags.end(), extra_flags.begin(), extra_flags.end());
    peer_ = std::make_unique<ferry::test::child_process>(FERRY_TEST_NODE,
                                                         std::move(flags));
    auto port = peer_->wait_for("port ");
    EXPECT_TRUE(port);
    port_ = static_cast<uint16_t>(port ? std::stoi(*port) : 0);
  }

  ~hostile_fixture() override {
    conn_.reset();
    peer_->close_stdin();
    peer_->wait(10s);
  }

  /// Node "rogue"'s id: above any id the peer draws, so the peer decides
  /// the handshake (it sends the welcome).
  static constexpr uint64_t rogue_id = ~uint64_t{0} - 1;

  /// Returns "rogue"'s intro, of wire protocol `protocol` and id `id`.
  static intro rogue_intro(uint32_t protocol = wire_protocol_version,
                           uint64_t id = rogue_id) {
    intro result;
    result.protocol = protocol;
    result.node_id = id;
    result.node_name = "rogue";
    result.host_id = "elsewhere";
    return result;
  }

  /// Returns "rogue"'s hello.
  hello rogue_hello() const {
    hello result;
    result.serializers = {"msgpack"};
    result.deserializers = {"msgpack"};
    result.decodable = {"msgpack", "cereal.binary"};
    result.window_bytes = 1 << 20;
    result.window_messages = 64;
    result.type_names = type_names_;
    result.type_shapes = type_shapes_;
    return result;
  }

  /// Opens a connection and handshakes on it like a node named "rogue"
  /// speaking wire protocol `protocol` with node id `id`; the connection
  /// goes to `conn_`. Returns the id of the peer's default actor (0 when
  /// refused, with the peer's error in `refusal` if given).
  uint64_t handshake(uint32_t protocol = wire_protocol_version,
                     caf::error* refusal = nullptr, uint64_t id = rogue_id) {
    conn_ = std::make_unique<rogue_connection>(port_);
    conn_->send_raw(wire::preface);
    conn_->send_control(rogue_intro(protocol, id));
    return finish_handshake(*conn_, refusal);
  }

  /// Reads the peer's intro and answers with "rogue"'s hello on `conn`,
  /// then reads the peer's hello and welcome; returns the peer's default
  /// actor (0 when refused: the reason goes to `refusal`, or fails the
  /// test).
  uint64_t finish_handshake(rogue_connection& conn,
                            caf::error* refusal = nullptr) {
    uint64_t target = 0;
    bool hello_sent = false;
    for (;;) {
      auto x = conn.next();
      if (!x) {
        ADD_FAILURE() << "the handshake did not end";
        return 0;
      }
      switch (x->type) {
        case wire::frame_type::intro:
          if (auto theirs = x->as<intro>())
            peer_id_ = theirs->node_id;
          if (!hello_sent) {
            conn.send_control(rogue_hello());
            hello_sent = true;
          }
          break;
        case wire::frame_type::hello:
          if (auto theirs = x->as<hello>())
            target = theirs->default_actor;
          break;
        case wire::frame_type::welcome:
          return target;
        case wire::frame_type::refuse: {
          auto why = x->as<refuse>();
          if (refusal != nullptr && why)
            *refusal = why->reason;
          else
            ADD_FAILURE() << (why ? ferry::render(why->reason)
                                  : std::string{"an empty refusal"});
          return 0;
        }
        default:
          break;
      }
    }
  }

  /// Sends `msg` as a request from actor `sender` of "rogue" (default: 77)
  /// and returns the error the peer answers with.
  caf::error send_and_await_error(wire_message msg, uint64_t sender = 0) {
    auto answer = send_and_await_answer(std::move(msg), sender);
    return answer ? answer->error : caf::error{};
  }

  /// Sends `msg` as a request from actor `sender` of "rogue" (default: 77)
  /// and returns the peer's answer, if one came within 10 s.
  std::optional<wire_message> send_and_await_answer(wire_message msg,
                                                    uint64_t sender = 0) {
    msg.sender = sender != 0 ? sender : rogue_actor;
    msg.mid = (uint64_t{1} << 60) | 42; // a request id
    conn_->send_message(msg);
    auto x = conn_->next_of(wire::frame_type::message);
    if (!x)
      return std::nullopt;
    return std::move(x->msg);
  }

  /// Sends the request frame `x` (with request id `x.request`) and returns
  /// the peer's answer to it (an `actor_id`, `chunk` or `failed` frame).
  template <class T>
  std::optional<received> ask(const T& x) {
    conn_->send_control(x);
    for (;;) {
      auto got = conn_->next();
      if (!got)
        return std::nullopt;
      if (got->type == wire::frame_type::actor_id
          || got->type == wire::frame_type::chunk
          || got->type == wire::frame_type::failed)
        return got;
    }
  }

  static wire_element element(const std::string& family,
                              const std::string& type,
                              std::vector<std::byte> frame) {
    ferry::serializers::payload_header header;
    header.family = family;
    header.type_name = type;
    header.frame_sizes = {frame.size()};
    wire_element result;
    result.header = wire_bytes{ferry::serializers::encode_header(header)};
    wire_frame f;
    f.size = frame.size();
    f.data = wire_bytes{std::move(frame)};
    result.frames.push_back(std::move(f));
    return result;
  }

  /// An element whose header names `family` and `type` and whose frames
  /// have `sizes` and `kind`, without data or tickets (callers add those).
  static wire_element described(const std::string& family,
                                const std::string& type, frame_kind kind,
                                const std::vector<uint64_t>& sizes) {
    ferry::serializers::payload_header header;
    header.family = family;
    header.type_name = type;
    header.frame_sizes = sizes;
    wire_element result;
    result.header = wire_bytes{ferry::serializers::encode_header(header)};
    for (auto size : sizes) {
      wire_frame f;
      f.kind = static_cast<uint8_t>(kind);
      f.size = size;
      result.frames.push_back(std::move(f));
    }
    return result;
  }

  /// A message to actor `target` in cereal.binary, a family outside the
  /// peer's allowlist: once read, it is refused with `family_refused`.
  static wire_message refused_for_its_family(uint64_t target) {
    wire_message msg;
    msg.target = target;
    msg.elements.push_back(element("cereal.binary", "string",
                                   std::vector<std::byte>(13, std::byte{1})));
    return msg;
  }

  /// A one-way message to actor `target` with one frame of `size` bytes
  /// that stays with "rogue" as transfer `ticket`, to be pulled.
  static wire_message to_pull(uint64_t target, uint64_t size,
                              uint64_t ticket) {
    wire_message msg;
    msg.target = target;
    msg.mid = caf::make_message_id().integer_value();
    msg.elements.push_back(
      described("msgpack", "string", frame_kind::remote_object, {size}));
    msg.elements[0].frames[0].ticket = ticket;
    return msg;
  }

  /// Waits until the peer's link stats contain `needle`; returns the last
  /// stats line read.
  std::string await_peer_stats(const std::string& needle) {
    std::string line;
    ferry::test::eventually([&] {
      line = peer_link_stats();
      return line.find(needle) != std::string::npos;
    });
    return line;
  }

  /// Returns the peer's stats line of its link to "rogue" (see
  /// test_node.cpp), or "" when it holds no such link.
  std::string peer_link_stats() {
    peer_->write_line("stats");
    std::string result;
    for (;;) {
      auto line = peer_->read_line(10s);
      if (!line || *line == "end")
        break;
      if (line->rfind("link rogue ", 0) == 0)
        result = *line;
    }
    return result;
  }

  /// The actor of "rogue" that sends its requests.
  static constexpr uint64_t rogue_actor = 77;

  std::unique_ptr<ferry::test::child_process> peer_;
  uint16_t port_ = 0;
  /// The connection of the last handshake.
  std::unique_ptr<rogue_connection> conn_;
  /// The peer's node id, from its intro.
  uint64_t peer_id_ = 0;
  /// The types (and their shapes) "rogue" names in its hello.
  std::vector<std::string> type_names_;
  std::vector<std::string> type_shapes_;
};

} // namespace ferry::test
