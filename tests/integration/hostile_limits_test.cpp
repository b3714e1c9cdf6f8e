// Limits a peer cannot push a ferry node past. Proxies: a node keeps at most
// `max-proxies` proxies of a peer's live actors, refuses a message from yet
// another sender until one ends, and frees a slot only on a down notice that
// carries the link's token. Held messages: a node holds at most
// `max-held-messages` of a peer's messages unprocessed, refuses the rest with
// a typed error (one response per request of its own passes), serves the
// peer again once its actors catch up, and refuses a size claim that would
// wrap the held count around.
#include "hostile_peer.hpp"

#include "ferry/errc.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using namespace ferry::detail;
using ferry::test::hostile_fixture;
using ferry::test::mentions;

namespace {

/// A peer that keeps at most two proxies of the actors of "rogue".
class hostile_fixture_two_proxies : public hostile_fixture {
protected:
  hostile_fixture_two_proxies()
    : hostile_fixture({"--ferry.link.max-proxies=2"}) {
    // nop
  }

  /// A request to the echo actor ("abc" in msgpack) from actor `sender`;
  /// returns the answer's error (none: answered), or `no_answer`.
  caf::error echo_from(uint64_t target, uint64_t sender) {
    wire_message msg;
    msg.target = target;
    msg.elements.push_back(element(
      "msgpack", "string",
      {std::byte{0xa3}, std::byte{'a'}, std::byte{'b'}, std::byte{'c'}}));
    auto answer = send_and_await_answer(std::move(msg), sender);
    if (!answer)
      return caf::make_error(caf::sec::request_timeout, "no answer");
    EXPECT_EQ(answer->target, sender);
    return answer->error;
  }
};

} // namespace

TEST_F(hostile_fixture_two_proxies, SendersBeyondMaxProxiesAreRefusedUntilOneEnds) {
  // Arrange
  auto target = handshake();
  ASSERT_NE(target, 0u);
  ASSERT_FALSE(echo_from(target, 1001));
  ASSERT_FALSE(echo_from(target, 1002));
  // Act: a third invented sender, one known again, then one more after the
  // peer heard that actor 1001 ended.
  auto third = echo_from(target, 1003);
  auto known = echo_from(target, 1002);
  send_to_peer(down_notice{1001, caf::exit_reason::normal});
  auto after_down = echo_from(target, 1004);
  // Assert
  ASSERT_TRUE(third) << "the third sender's request was served";
  EXPECT_EQ(third, caf::make_error(ferry::errc::too_many_proxies,
                                   third.context()));
  EXPECT_TRUE(mentions(third, "actor 1003 of node rogue"));
  EXPECT_TRUE(mentions(third, "ferry.link.max-proxies"));
  EXPECT_FALSE(known) << ferry::render(known);
  EXPECT_FALSE(after_down) << ferry::render(after_down);
  auto stats = peer_link_stats();
  EXPECT_NE(stats.find(" refusals=1 "), std::string::npos) << stats;
  EXPECT_NE(stats.find(" proxies=2 "), std::string::npos) << stats;
}

TEST_F(hostile_fixture_two_proxies, DownNoticeWithoutTheLinksTokenChangesNothing) {
  // Arrange: both proxies in use.
  auto target = handshake();
  ASSERT_NE(target, 0u);
  ASSERT_FALSE(echo_from(target, 1001));
  ASSERT_FALSE(echo_from(target, 1002));
  // Act: a down notice for actor 1001 as a third node would forge it,
  // without the link's token; then a new sender.
  (*self_)->send(gateway_, down_notice{1001, caf::exit_reason::normal,
                                       token_ ^ 1});
  auto after_forged = echo_from(target, 1003);
  // Assert: the peer still keeps 1001's proxy, so the new sender is over
  // the limit.
  EXPECT_EQ(after_forged, caf::make_error(ferry::errc::too_many_proxies,
                                          after_forged.context()));
  auto stats = peer_link_stats();
  EXPECT_NE(stats.find(" proxies=2 "), std::string::npos) << stats;
  EXPECT_NE(stats.find(" wrong_token=1"), std::string::npos) << stats;
}

namespace {

/// A peer that holds at most 8 of "rogue"'s messages unprocessed.
class hostile_fixture_few_held : public hostile_fixture {
protected:
  hostile_fixture_few_held()
    : hostile_fixture({"--ferry.link.max-held-messages=8"}) {
    // nop
  }

  /// Returns the id of the peer's actor exposed as `name` (0: none).
  uint64_t lookup_actor(const std::string& name) {
    uint64_t id = 0;
    (*self_)->request(gateway_, 10s, lookup{name})
      .receive([&](uint64_t x) { id = x; },
               [&](caf::error& err) { ADD_FAILURE() << caf::to_string(err); });
    return id;
  }

  /// A one-way message of byte vector `bin` (msgpack) to actor `target`,
  /// as a node sends it (a raw id of 0 would be urgent: another queue, which
  /// the gate's opening does not look at again).
  static wire_message bytes_to(uint64_t target, std::vector<std::byte> bin) {
    wire_message msg;
    msg.target = target;
    msg.mid = caf::make_message_id().integer_value();
    msg.elements.push_back(element("msgpack", "bytes", std::move(bin)));
    return msg;
  }
};

} // namespace

TEST_F(hostile_fixture_few_held, PeerIgnoringItsCreditIsRefusedBeyondTheHeldLimit) {
  // Arrange: "gate" leaves byte vectors in its mailbox until opened, so
  // every message taken stays held.
  ASSERT_NE(handshake(), 0u);
  auto gate = lookup_actor("gate");
  ASSERT_NE(gate, 0u);
  std::vector<std::byte> four_bytes{std::byte{0xc4}, std::byte{4},
                                    std::byte{1},    std::byte{2},
                                    std::byte{3},    std::byte{4}};
  // Act: 40 one-way messages at once, never waiting for credit.
  for (int i = 0; i < 40; ++i)
    send_to_peer(bytes_to(gate, four_bytes));
  std::vector<caf::error> refused;
  bool done = false;
  (*self_)->receive_while([&] { return !done; })(
    [&](refusal& x) {
      refused.push_back(std::move(x.reason));
      done = refused.size() == 32;
    },
    [&](credit&) {}, caf::after(10s) >> [&] { done = true; });
  auto held = await_peer_stats(" held=8");
  // Assert: the first 8 held, the other 32 refused with a typed error that
  // names both nodes and the setting.
  ASSERT_EQ(refused.size(), 32u);
  for (auto& err : refused) {
    EXPECT_EQ(err, caf::make_error(ferry::errc::receiver_full, err.context()));
    EXPECT_TRUE(mentions(err, "node B holds 8 messages"));
    EXPECT_TRUE(mentions(err, "from node rogue"));
    EXPECT_TRUE(mentions(err, "max-held-messages"));
  }
  EXPECT_NE(held.find(" refusals=32 "), std::string::npos) << held;
  EXPECT_NE(held.find(" held=8"), std::string::npos) << held;
}

TEST_F(hostile_fixture_few_held, OneResponsePerRequestPassesTheHeldLimit) {
  // Arrange: "asker" on the peer sends "rogue" a request; then a message
  // whose byte "rogue" never lets the peer pull, and 7 one-way messages
  // queued behind it: 8 held, the limit.
  ASSERT_NE(handshake(), 0u);
  auto asker = lookup_actor("asker");
  auto gate = lookup_actor("gate");
  ASSERT_NE(asker, 0u);
  ASSERT_NE(gate, 0u);
  wire_message go;
  go.target = asker;
  go.sender = (*self_)->id();
  go.mid = caf::make_message_id().integer_value();
  go.elements.push_back(element("msgpack", "string",
                                {std::byte{0xa2}, std::byte{'g'},
                                 std::byte{'o'}}));
  send_to_peer(std::move(go));
  std::optional<wire_message> request;
  bool done = false;
  (*self_)->receive_while([&] { return !done && !request; })(
    [&](wire_message& x) { request = std::move(x); }, [&](credit&) {},
    caf::after(10s) >> [&] { done = true; });
  ASSERT_TRUE(request) << "asker sent no request";
  ASSERT_TRUE(caf::message_id{request->mid}.is_request());
  // "go" stays held until asker's handler has returned, which may be after
  // its request arrived here: with it, the seventh message would be refused.
  ASSERT_NE(await_peer_stats(" held=0 ").find(" held=0 "), std::string::npos);
  send_to_peer(to_pull(gate, 1, 3));
  for (int i = 0; i < 7; ++i)
    send_to_peer(bytes_to(gate, {std::byte{0xc4}, std::byte{0}}));
  ASSERT_NE(await_peer_stats(" held=8").find(" held=8"), std::string::npos);
  // Act: 20 copies of the response to asker's request.
  for (int i = 0; i < 20; ++i) {
    wire_message answer;
    answer.target = request->sender;
    answer.sender = (*self_)->id();
    answer.mid
      = caf::message_id{request->mid}.response_id().integer_value();
    answer.elements.push_back(element("msgpack", "string",
                                      {std::byte{0xa4}, std::byte{'p'},
                                       std::byte{'o'}, std::byte{'n'},
                                       std::byte{'g'}}));
    send_to_peer(std::move(answer));
  }
  auto stats = await_peer_stats(" refusals=19 ");
  // Assert: one copy taken beyond the limit (also while the link waits
  // for the pull), the other 19 refused.
  EXPECT_NE(stats.find(" refusals=19 "), std::string::npos) << stats;
  EXPECT_NE(stats.find(" held=9"), std::string::npos) << stats;
}

TEST_F(hostile_fixture_few_held, LinkServesThePeerAgainOnceItsActorsCatchUp) {
  // Arrange: 8 messages held by "gate", a ninth refused.
  ASSERT_NE(handshake(), 0u);
  auto gate = lookup_actor("gate");
  ASSERT_NE(gate, 0u);
  std::vector<std::byte> empty_bin{std::byte{0xc4}, std::byte{0}};
  for (int i = 0; i < 8; ++i)
    send_to_peer(bytes_to(gate, empty_bin));
  ASSERT_NE(await_peer_stats(" held=8").find(" held=8"), std::string::npos);
  auto ninth = send_and_await_error(bytes_to(gate, empty_bin));
  ASSERT_TRUE(ninth) << "the ninth message was taken";
  ASSERT_EQ(ninth, caf::make_error(ferry::errc::receiver_full,
                                   ninth.context()));
  // Act: the gate processes what it holds; then "rogue" asks how many.
  peer_->write_line("open-gate");
  auto drained = await_peer_stats(" held=0");
  wire_message count;
  count.target = gate;
  count.elements.push_back(element(
    "msgpack", "string",
    {std::byte{0xa5}, std::byte{'c'}, std::byte{'o'}, std::byte{'u'},
     std::byte{'n'}, std::byte{'t'}}));
  auto answer = send_and_await_answer(std::move(count));
  // Assert: the 8 held messages were delivered, the refused one was not,
  // and the request was taken (msgpack's 8 is the single byte 0x08).
  EXPECT_NE(drained.find(" held=0"), std::string::npos) << drained;
  ASSERT_TRUE(answer);
  ASSERT_FALSE(answer->error) << ferry::render(answer->error);
  ASSERT_EQ(answer->elements.size(), 1u);
  ASSERT_EQ(answer->elements[0].frames.size(), 1u);
  auto value = answer->elements[0].frames[0].data.bytes();
  ASSERT_EQ(value.size(), 1u);
  EXPECT_EQ(value[0], std::byte{8});
}

TEST_F(hostile_fixture_few_held, SizeClaimThatWouldWrapTheHeldCountIsRefused) {
  // Arrange: "gate" holds one message of "rogue".
  ASSERT_NE(handshake(), 0u);
  auto gate = lookup_actor("gate");
  ASSERT_NE(gate, 0u);
  send_to_peer(bytes_to(gate, {std::byte{0xc4}, std::byte{0}}));
  ASSERT_NE(await_peer_stats(" held=1").find(" held=1"), std::string::npos);
  // Act: a store frame claiming 2^64 - 1 bytes (its wire size saturates
  // there; added to what is held, it would wrap around to a small figure).
  wire_message wild;
  wild.target = gate;
  wild.elements.push_back(described("msgpack", "bytes",
                                    frame_kind::store_object,
                                    {~uint64_t{0}}));
  auto err = send_and_await_error(std::move(wild));
  // Assert: refused for what it would hold, before anything else.
  ASSERT_TRUE(err) << "the message was taken";
  EXPECT_EQ(err, caf::make_error(ferry::errc::receiver_full, err.context()));
}
