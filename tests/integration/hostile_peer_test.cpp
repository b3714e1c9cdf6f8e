// A peer that does not follow ferry's rules: a plain CAF process speaking
// ferry's wire format by hand sends what a well-behaved node never would
// (a family outside the allowlist, garbage headers and frames). The ferry
// node must answer each with a typed error, count the refusal, and keep
// serving well-behaved peers.
#include "test_types.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/test/child_process.hpp"

#include "detail/wire.hpp"

#include "ferry/serializers/payload.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <gtest/gtest.h>

#include <random>

using namespace std::chrono_literals;
using namespace ferry::detail;

namespace {

class hostile_fixture : public testing::Test {
protected:
  hostile_fixture() {
    cfg_.load<caf::io::middleman>();
    register_wire_types(cfg_);
    peer_ = std::make_unique<ferry::test::child_process>(
      FERRY_TEST_NODE,
      std::vector<std::string>{"--ferry.node-name=B",
                               "--ferry.store.disabled",
                               "--ferry.link.deserializers=[\"msgpack\"]"});
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

  /// Connects and handshakes like a node named "rogue"; returns the id of
  /// the peer's default actor.
  uint64_t handshake() {
    auto gw = sys_->middleman().remote_actor("127.0.0.1", port_);
    EXPECT_TRUE(gw);
    gateway_ = *gw;
    hello mine;
    mine.node_name = "rogue";
    mine.host_id = "elsewhere";
    mine.serializers = {"msgpack"};
    mine.deserializers = {"msgpack"};
    mine.decodable = {"msgpack", "cereal.binary"};
    mine.gateway = caf::actor_cast<caf::actor>(*self_);
    mine.window_bytes = 1 << 20;
    mine.window_messages = 64;
    uint64_t target = 0;
    (*self_)->request(gateway_, 10s, mine)
      .receive([&](hello& theirs) { target = theirs.default_actor; },
               [&](caf::error& err) { ADD_FAILURE() << caf::to_string(err); });
    return target;
  }

  /// Sends `msg` as a request-like wire message and returns the error the
  /// peer answers with (through its link to our "gateway", i.e. `self_`).
  caf::error send_and_await_error(wire_message msg) {
    msg.sender = (*self_)->id();
    msg.mid = (uint64_t{1} << 60) | 42; // a request id
    (*self_)->send(gateway_, std::move(msg));
    caf::error result;
    bool done = false;
    (*self_)->receive_while([&] { return !done; })(
      [&](wire_message& answer) {
        result = answer.error;
        done = true;
      },
      [&](credit&) {},
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

  /// Returns the peer's "refusals=" counter for the link to "rogue".
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
};

} // namespace

TEST_F(hostile_fixture, FamilyOutsideTheAllowlistIsRefusedWithTypedError) {
  // Arrange
  auto target = handshake();
  ASSERT_NE(target, 0u);
  wire_message msg;
  msg.target = target;
  msg.elements.push_back(element("cereal.binary", "string",
                                 std::vector<std::byte>(13, std::byte{1})));
  // Act
  auto err = send_and_await_error(std::move(msg));
  // Assert
  ASSERT_TRUE(err);
  EXPECT_EQ(err, caf::make_error(ferry::errc::family_refused, err.context()));
  auto text = ferry::render(err);
  EXPECT_NE(text.find("cereal.binary"), std::string::npos) << text;
  EXPECT_NE(text.find("[msgpack]"), std::string::npos) << text;
  EXPECT_NE(peer_link_stats().find("refusals=1"), std::string::npos);
}

TEST_F(hostile_fixture, GarbageHeadersAndFramesGetErrorsAndTheNodeLivesOn) {
  // Arrange
  auto target = handshake();
  ASSERT_NE(target, 0u);
  std::mt19937_64 rng{1234};
  auto random_bytes = [&](size_t n) {
    std::vector<std::byte> result(n);
    for (auto& b : result)
      b = static_cast<std::byte>(rng() & 0xFF);
    return result;
  };
  int errors = 0;
  // Act: random headers, then valid headers with random frames.
  for (int i = 0; i < 20; ++i) {
    wire_message msg;
    msg.target = target;
    wire_element el;
    el.header = wire_bytes{random_bytes(1 + rng() % 64)};
    msg.elements.push_back(std::move(el));
    if (send_and_await_error(std::move(msg)))
      ++errors;
  }
  for (int i = 0; i < 20; ++i) {
    wire_message msg;
    msg.target = target;
    msg.elements.push_back(
      element("msgpack", "test.record", random_bytes(rng() % 256)));
    if (send_and_await_error(std::move(msg)))
      ++errors;
  }
  // Assert: every message got an error, and a real node is still served.
  EXPECT_EQ(errors, 40);
  ferry::node_config cfg;
  cfg.store_enabled = false;
  cfg.default_link.serializers = {"msgpack"};
  ferry::test::register_test_types(cfg);
  auto n = ferry::node::start(cfg);
  ASSERT_TRUE(n);
  auto echo = (*n)->remote_actor("127.0.0.1", port_);
  ASSERT_TRUE(echo) << ferry::render(echo.error());
  caf::scoped_actor self{(*n)->system()};
  std::string reply;
  self->request(*echo, 10s, std::string{"alive"})
    .receive([&](std::string& x) { reply = x; }, [&](caf::error&) {});
  EXPECT_EQ(reply, "evila");
}
