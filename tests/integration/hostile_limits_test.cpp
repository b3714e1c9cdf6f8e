// Limits a peer cannot push a ferry node past. Proxies: a node keeps at most
// `max-proxies` proxies of a peer's live actors, refuses a message from yet
// another sender until one ends, and frees a slot only on a down notice that
// comes on the link's own connection for an actor it keeps a proxy of (one
// on a refused second connection, or for an actor without a proxy, frees
// nothing). Held messages: a node holds at most `max-held-messages` of a
// peer's messages unprocessed, refuses the rest with a typed error (one
// response per request of its own passes), serves the peer again once its
// actors catch up, and refuses a size claim that would wrap the held count
// around.
#include "hostile_peer.hpp"

#include "ferry/errc.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <chrono>
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

  /// Makes a link whose two proxies stand for actors 1001 and 1002 of
  /// "rogue"; returns the echo actor's id (0: failed).
  uint64_t fill_both_proxies() {
    auto target = handshake();
    EXPECT_NE(target, 0u);
    EXPECT_FALSE(echo_from(target, 1001));
    EXPECT_FALSE(echo_from(target, 1002));
    return target;
  }
};

} // namespace

TEST_F(hostile_fixture_two_proxies, SendersBeyondMaxProxiesAreRefusedUntilOneEnds) {
  // Arrange
  auto target = fill_both_proxies();
  ASSERT_NE(target, 0u);
  // Act: a third invented sender, one known again, then one more after the
  // peer heard that actor 1001 ended.
  auto third = echo_from(target, 1003);
  auto known = echo_from(target, 1002);
  conn_->send_control(down_notice{1001, caf::exit_reason::normal});
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

TEST_F(hostile_fixture_two_proxies, DownNoticeOnARefusedSecondConnectionFreesNoSlot) {
  // Arrange: both proxies in use on the link's connection.
  auto target = fill_both_proxies();
  ASSERT_NE(target, 0u);
  auto first = std::move(conn_);
  // Act: a second connection in "rogue"'s name (a third node posing as it)
  // is refused, and says actor 1001 ended anyway; then a new sender on the
  // link.
  caf::error refused;
  EXPECT_EQ(handshake(wire_protocol_version, &refused), 0u);
  conn_->send_control(down_notice{1001, caf::exit_reason::normal});
  EXPECT_TRUE(conn_->await_close());
  conn_ = std::move(first);
  auto after_forged = echo_from(target, 1003);
  // Assert: the peer still keeps 1001's proxy, so the new sender is over
  // the limit.
  EXPECT_EQ(refused,
            caf::make_error(ferry::errc::already_linked, refused.context()));
  EXPECT_EQ(after_forged, caf::make_error(ferry::errc::too_many_proxies,
                                          after_forged.context()));
  auto stats = peer_link_stats();
  EXPECT_NE(stats.find(" proxies=2 "), std::string::npos) << stats;
}

TEST_F(hostile_fixture_two_proxies, DownNoticeForAnActorWithoutAProxyFreesNoSlot) {
  // Arrange: both proxies in use.
  auto target = fill_both_proxies();
  ASSERT_NE(target, 0u);
  // Act: the link says an actor ended that never sent the peer anything;
  // then a new sender.
  conn_->send_control(down_notice{5555, caf::exit_reason::normal});
  auto after = echo_from(target, 1003);
  // Assert: both proxies stay, so the new sender is over the limit.
  EXPECT_EQ(after, caf::make_error(ferry::errc::too_many_proxies,
                                   after.context()));
  auto stats = peer_link_stats();
  EXPECT_NE(stats.find(" proxies=2 "), std::string::npos) << stats;
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
    auto answer = ask(lookup{next_request_++, name});
    if (!answer) {
      ADD_FAILURE() << "no answer to the lookup of " << name;
      return 0;
    }
    if (auto failed = answer->as<failed_answer>()) {
      ADD_FAILURE() << ferry::render(failed->reason);
      return 0;
    }
    auto found = answer->as<actor_id_answer>();
    return found ? found->actor : 0;
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

  /// The id of "rogue"'s next request.
  uint64_t next_request_ = 1;
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
    conn_->send_message(bytes_to(gate, four_bytes));
  std::vector<caf::error> refused;
  while (refused.size() < 32) {
    auto x = conn_->next_of(wire::frame_type::refusal);
    if (!x)
      break;
    if (auto notice = x->as<refusal>())
      refused.push_back(std::move(notice->reason));
  }
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
  go.sender = rogue_actor;
  go.mid = caf::make_message_id().integer_value();
  go.elements.push_back(element("msgpack", "string",
                                {std::byte{0xa2}, std::byte{'g'},
                                 std::byte{'o'}}));
  conn_->send_message(go);
  auto request = conn_->next_of(wire::frame_type::message);
  ASSERT_TRUE(request) << "asker sent no request";
  ASSERT_EQ(request->msg.target, rogue_actor);
  ASSERT_TRUE(caf::message_id{request->msg.mid}.is_request());
  // "go" stays held until asker's handler has returned, which may be after
  // its request arrived here: with it, the seventh message would be refused.
  ASSERT_NE(await_peer_stats(" held=0 ").find(" held=0 "), std::string::npos);
  conn_->send_message(to_pull(gate, 1, 3));
  for (int i = 0; i < 7; ++i)
    conn_->send_message(bytes_to(gate, {std::byte{0xc4}, std::byte{0}}));
  ASSERT_NE(await_peer_stats(" held=8").find(" held=8"), std::string::npos);
  // Act: 20 copies of the response to asker's request.
  for (int i = 0; i < 20; ++i) {
    wire_message answer;
    answer.target = request->msg.sender;
    answer.sender = rogue_actor;
    answer.mid
      = caf::message_id{request->msg.mid}.response_id().integer_value();
    answer.elements.push_back(element("msgpack", "string",
                                      {std::byte{0xa4}, std::byte{'p'},
                                       std::byte{'o'}, std::byte{'n'},
                                       std::byte{'g'}}));
    conn_->send_message(answer);
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
    conn_->send_message(bytes_to(gate, empty_bin));
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
  conn_->send_message(bytes_to(gate, {std::byte{0xc4}, std::byte{0}}));
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
