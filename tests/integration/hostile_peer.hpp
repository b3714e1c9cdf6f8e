// A peer that does not follow ferry's rules, for the hostile_* tests: the
// test process is a plain CAF system ("rogue") that speaks ferry's wire format
// by hand (white-box: it includes the framework's wire/ headers) to a ferry
// node in a child process (ferry_test_node, node "B", no store, msgpack only).
// `hostile_fixture` starts that peer, handshakes, sends hand-made wire
// messages and reads what the peer answers and its link stats;
// `encode_wire` and `decode_wire` serve the codec tests as well. One test
// thread uses a fixture.
#pragma once

#include "test_types.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/test/child_process.hpp"
#include "ferry/test/mentions.hpp"

#include "wire/control.hpp"
#include "wire/message.hpp"
#include "wire/registration.hpp"

#include "ferry/serializers/payload.hpp"

#include <caf/all.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/io/all.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ferry::test {

using namespace std::chrono_literals;
using namespace ferry::detail;

/// Which landing the chunk reply to the first of two chunk requests names.
enum class named_landing { the_second_requests, none_registered };

/// A ferry node "B" in a child process and, in this process, a CAF system
/// that reaches it as node "rogue" without ferry's rules.
class hostile_fixture : public testing::Test {
protected:
  /// Starts the peer with `extra_flags` after the fixture's own.
  explicit hostile_fixture(std::vector<std::string> extra_flags = {}) {
    cfg_.load<caf::io::middleman>();
    register_wire_types(cfg_);
    std::vector<std::string> flags{"--ferry.node-name=B",
                                   "--ferry.store.disabled",
                                   "--ferry.link.deserializers=[\"msgpack\"]"};
    flags.insert(flags.end(), extra_flags.begin(), extra_flags.end());
    peer_ = std::make_unique<ferry::test::child_process>(FERRY_TEST_NODE,
                                                         std::move(flags));
    auto port = peer_->wait_for("port ");
    EXPECT_TRUE(port);
    port_ = static_cast<uint16_t>(port ? std::stoi(*port) : 0);
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    self_ = std::make_unique<caf::scoped_actor>(*sys_);
  }

  ~hostile_fixture() override {
    self_.reset();
    sys_.reset();
    peer_->close_stdin();
    peer_->wait(10s);
  }

  /// Connects and handshakes like a node named "rogue" speaking wire
  /// protocol `protocol`; returns the id of the peer's default actor (0 when
  /// refused, with the peer's error in `refusal` if given).
  uint64_t handshake(uint32_t protocol = wire_protocol_version,
                     caf::error* refusal = nullptr,
                     uint64_t link_token = rogue_token) {
    auto gw = sys_->middleman().remote_actor("127.0.0.1", port_);
    EXPECT_TRUE(gw);
    gateway_ = *gw;
    hello mine;
    mine.protocol = protocol;
    mine.node_name = "rogue";
    mine.host_id = "elsewhere";
    mine.serializers = {"msgpack"};
    mine.deserializers = {"msgpack"};
    mine.decodable = {"msgpack", "cereal.binary"};
    mine.gateway = caf::actor_cast<caf::actor>(*self_);
    mine.window_bytes = 1 << 20;
    mine.window_messages = 64;
    mine.link_token = link_token;
    mine.type_names = type_names_;
    mine.type_shapes = type_shapes_;
    uint64_t target = 0;
    (*self_)->request(gateway_, 10s, mine)
      .receive(
        [&](hello& theirs) {
          target = theirs.default_actor;
          token_ = theirs.link_token;
        },
        [&](caf::error& err) {
          if (refusal != nullptr)
            *refusal = std::move(err);
          else
            ADD_FAILURE() << caf::to_string(err);
        });
    return target;
  }

  /// Sends `msg` as a request-like wire message and returns the error the
  /// peer answers with (through its link to our "gateway", i.e. `self_`).
  /// `sender` names the requesting actor of "rogue" (default: `self_`).
  caf::error send_and_await_error(wire_message msg, uint64_t sender = 0) {
    auto answer = send_and_await_answer(std::move(msg), sender);
    return answer ? answer->error : caf::error{};
  }

  /// Sends `msg` as a request from actor `sender` of "rogue" (default:
  /// `self_`) and returns the peer's answer, if one came within 10 s.
  std::optional<wire_message> send_and_await_answer(wire_message msg,
                                                    uint64_t sender = 0) {
    msg.sender = sender != 0 ? sender : (*self_)->id();
    msg.mid = (uint64_t{1} << 60) | 42; // a request id
    send_to_peer(std::move(msg));
    std::optional<wire_message> result;
    bool done = false;
    (*self_)->receive_while([&] { return !done; })(
      [&](wire_message& answer) {
        // Everything the peer sends "rogue" names the token "rogue" asked
        // for in its hello.
        EXPECT_EQ(answer.token, rogue_token);
        result = std::move(answer);
        done = true;
      },
      [&](credit& x) { EXPECT_EQ(x.token, rogue_token); },
      caf::after(10s) >> [&] { done = true; });
    return result;
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

  /// Sends a request whose one 12 MiB frame stays with "rogue" (another
  /// host), so the peer pulls it in 4 MiB chunks from our gateway (self_);
  /// answers the first chunk request with a chunk of the right length
  /// naming `which` landing; returns the error the request is answered with.
  /// (Defined in hostile_transfer_test.cpp, its only user.)
  caf::error answer_first_chunk_naming(named_landing which);

  /// Waits until the peer's link stats contain `needle`; returns the last
  /// stats line read.
  std::string await_peer_stats(const std::string& needle) {
    std::string line;
    for (int i = 0; i < 1000; ++i) {
      line = peer_link_stats();
      if (line.find(needle) != std::string::npos)
        break;
      std::this_thread::sleep_for(10ms);
    }
    return line;
  }

  /// Sends `x` (a wire type) to the peer's gateway with the link's token.
  template <class T>
  void send_to_peer(T x) {
    x.token = token_;
    (*self_)->send(gateway_, std::move(x));
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

  caf::actor_system_config cfg_;
  std::unique_ptr<ferry::test::child_process> peer_;
  uint16_t port_ = 0;
  std::unique_ptr<caf::actor_system> sys_;
  std::unique_ptr<caf::scoped_actor> self_;
  caf::actor gateway_;
  /// The token the peer named in its hello (what it expects from "rogue").
  uint64_t token_ = 0;
  /// The token "rogue" names in its hello.
  static constexpr uint64_t rogue_token = 0x5eed;
  /// The types (and their shapes) "rogue" names in its hello.
  std::vector<std::string> type_names_;
  std::vector<std::string> type_shapes_;
};

template <class T>
std::vector<char> encode_wire(T& msg) {
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  if (auto err = sink(msg))
    ADD_FAILURE() << caf::to_string(err);
  return buf;
}

template <class T>
caf::error decode_wire(const std::vector<char>& buf, T& out) {
  caf::binary_deserializer source{nullptr, buf.data(), buf.size()};
  return source(out);
}

} // namespace ferry::test
