// Messages on a link that a well-behaved node never sends: a family outside
// the receiver's allowlist, random headers, valid headers with random frames,
// compressed frames claiming more than their codec allows. Each request is
// answered with a typed error naming the cause (counted as a refusal), no
// buffer of a merely claimed size is made, and the node goes on serving
// well-behaved peers.
#include "hostile_peer.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using namespace ferry::detail;
using ferry::test::hostile_fixture;
using ferry::test::mentions;

TEST_F(hostile_fixture, FamilyOutsideTheAllowlistIsRefusedWithTypedError) {
  // Arrange
  auto target = handshake();
  ASSERT_NE(target, 0u);
  // Act
  auto err = send_and_await_error(refused_for_its_family(target));
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

TEST_F(hostile_fixture, CompressedFrameClaimingMoreThanItsCodecAllowsIsRefused) {
  // Arrange: 16 bytes of "compressed" data that claim to become 1 GiB, once
  // as lz4 and once as zstd (whose frame header does not say so).
  auto target = handshake();
  ASSERT_NE(target, 0u);
  const uint64_t size = uint64_t{1} << 30;
  std::vector<caf::error> errors;
  for (auto kind : {frame_kind::inline_lz4, frame_kind::inline_zstd}) {
    auto el = described("msgpack", "string", kind, {size});
    el.frames[0].data = wire_bytes{std::vector<std::byte>(16, std::byte{0})};
    wire_message msg;
    msg.target = target;
    msg.elements.push_back(std::move(el));
    // Act
    errors.push_back(send_and_await_error(std::move(msg)));
  }
  // Assert: refused before a buffer of the claimed size is made.
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_TRUE(mentions(errors[0], "more than lz4's largest ratio"));
  EXPECT_TRUE(mentions(errors[1], "the frame's header says otherwise"));
}
