// Who a ferry node lets onto a link, and what it believes of the messages
// said to come from it. A hello of another wire protocol is refused naming
// both versions; a hello in the name of another node's gateway, or naming
// another token while the link is up, is refused; messages and control
// messages without the link's token (what a third node could forge) are
// dropped unread and counted; wire messages from a process that skipped the
// handshake are dropped and logged at most once a second. A hello whose type
// lists do not pair up is refused; a type the hello describes with another
// shape is refused before its bytes are decoded. The node lives on after
// each.
#include "hostile_peer.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using namespace ferry::detail;
using ferry::test::hostile_fixture;
using ferry::test::mentions;

TEST_F(hostile_fixture, PeerSpeakingAnotherWireProtocolIsRefusedByName) {
  // Arrange: a node of the previous wire protocol.
  caf::error refusal;
  // Act
  auto target = handshake(wire_protocol_version - 1, &refusal);
  // Assert
  EXPECT_EQ(target, 0u);
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal,
            caf::make_error(ferry::errc::handshake_failed, refusal.context()));
  auto text = ferry::render(refusal);
  EXPECT_NE(text.find("protocol " + std::to_string(wire_protocol_version - 1)),
            std::string::npos)
    << text;
  EXPECT_NE(text.find("run the same ferry version"), std::string::npos)
    << text;
  // The node lives on: a peer with the right protocol gets in.
  EXPECT_NE(handshake(), 0u);
}

TEST_F(hostile_fixture, HelloNamingAnotherNodesGatewayIsRefused) {
  // Arrange: "rogue" says hello in the name of the peer's own gateway: a
  // link is keyed by the gateway's node, so accepting it would take the
  // link of that node (here: make one to the peer itself).
  auto gw = sys_->middleman().remote_actor("127.0.0.1", port_);
  ASSERT_TRUE(gw);
  hello mine;
  mine.node_name = "rogue";
  mine.host_id = "elsewhere";
  mine.serializers = {"msgpack"};
  mine.deserializers = {"msgpack"};
  mine.decodable = {"msgpack"};
  mine.gateway = *gw;
  caf::error err;
  // Act
  (*self_)->request(*gw, 10s, mine)
    .receive([&](hello&) {}, [&](caf::error& x) { err = std::move(x); });
  // Assert
  ASSERT_TRUE(err) << "the peer accepted the hello";
  EXPECT_EQ(err, caf::make_error(ferry::errc::handshake_failed, err.context()));
  EXPECT_TRUE(mentions(err, "naming a gateway on another node"));
  EXPECT_EQ(peer_link_stats(), "");
}

TEST_F(hostile_fixture, HelloNamingAnotherTokenWhileTheLinkIsUpIsRefused) {
  // Arrange: a link to "rogue" is up.
  ASSERT_NE(handshake(), 0u);
  // Act: a hello of "rogue" naming another token (a peer whose own link is
  // gone while this one lives on, or a third node in its name), then one
  // naming the link's token (handshakes crossing each other).
  caf::error refusal;
  auto other_token = handshake(wire_protocol_version, &refusal,
                               rogue_token + 1);
  auto same_token = handshake();
  // Assert: the first fails loudly instead of leaving one direction
  // dropping everything; the second is answered as the link is.
  EXPECT_EQ(other_token, 0u);
  ASSERT_TRUE(refusal) << "the peer took the other token";
  EXPECT_EQ(refusal,
            caf::make_error(ferry::errc::handshake_failed, refusal.context()));
  EXPECT_TRUE(mentions(refusal, "still holds a link to node rogue"));
  EXPECT_NE(same_token, 0u);
}

TEST_F(hostile_fixture, MessagesWithoutTheLinksTokenAreDroppedUnread) {
  // Arrange: what a third node connected to the peer could send it as
  // "rogue" (CAF believes the source node of a routed message), which does
  // not know the token the peer named in its hello to "rogue": a request,
  // a refusal, a transfer release and a chunk request. Each request would
  // be answered (family_refused) if it were read.
  auto target = handshake();
  ASSERT_NE(target, 0u);
  auto forged_token = token_ ^ 1;
  auto request = [&](uint64_t token, uint64_t id) {
    auto msg = refused_for_its_family(target);
    msg.sender = (*self_)->id();
    msg.mid = (uint64_t{1} << 60) | id;
    msg.token = token;
    return msg;
  };
  // Act
  (*self_)->send(gateway_, request(forged_token, 50));
  (*self_)->send(gateway_, refusal{target, caf::sec::runtime_error,
                                   forged_token});
  (*self_)->send(gateway_, transfer_done{1, forged_token});
  caf::error chunk_err;
  (*self_)
    ->request(gateway_, 10s, chunk_request{1, 0, 1, 0, forged_token})
    .receive([](chunk_reply&) {}, [&](caf::error& x) { chunk_err = x; });
  auto answer = send_and_await_answer(request(token_, 51));
  // Assert: the first answer is the one to the request with the token (the
  // link keeps order), each forgery counted once, the chunk request
  // answered with an error that says why.
  ASSERT_TRUE(answer) << "no answer to the request with the token";
  // (send_and_await_answer sends as request 42.)
  EXPECT_EQ(answer->mid, caf::message_id{(uint64_t{1} << 60) | 42}
                           .response_id()
                           .integer_value());
  EXPECT_EQ(answer->error, caf::make_error(ferry::errc::family_refused,
                                           answer->error.context()));
  EXPECT_TRUE(mentions(chunk_err, "without its token"));
  auto stats = peer_link_stats();
  EXPECT_NE(stats.find(" wrong_token=4"), std::string::npos) << stats;
  EXPECT_NE(stats.find(" refusals=1 "), std::string::npos) << stats;
}

TEST(unlinked_peer, MessagesWithoutAHandshakeAreDroppedAndLoggedOnceASecond) {
  // Arrange: a ferry node in this process whose log the test reads, and a
  // plain CAF system that reaches its gateway without ferry's handshake.
  struct log_lines {
    std::mutex mtx;
    std::vector<std::string> lines;
  };
  auto log = std::make_shared<log_lines>();
  ferry::node_config cfg;
  cfg.node_name = "A";
  cfg.store_enabled = false;
  cfg.log_sink = [log](const std::string& line) {
    std::lock_guard<std::mutex> guard{log->mtx};
    log->lines.push_back(line);
  };
  auto node = ferry::node::start(cfg);
  ASSERT_TRUE(node) << ferry::render(node.error());
  auto sink = (*node)->system().spawn([]() -> caf::behavior {
    return {[](const std::string&) {}};
  });
  auto port = (*node)->publish(sink);
  ASSERT_TRUE(port) << ferry::render(port.error());
  caf::actor_system_config rogue_cfg;
  rogue_cfg.load<caf::io::middleman>();
  register_wire_types(rogue_cfg);
  caf::actor_system rogue{rogue_cfg};
  auto gateway = rogue.middleman().remote_actor("127.0.0.1", *port);
  ASSERT_TRUE(gateway) << rogue.render(gateway.error());
  // Act: 50 wire messages at once, then a lookup of a name the node does
  // not expose, which the gateway answers after all of them.
  auto started = std::chrono::steady_clock::now();
  caf::scoped_actor self{rogue};
  for (int i = 0; i < 50; ++i)
    self->send(*gateway, wire_message{});
  caf::error answer;
  self->request(*gateway, 10s, lookup{"nobody"})
    .receive(
      [&](uint64_t id) {
        ADD_FAILURE() << "the node exposes \"nobody\" as actor " << id;
      },
      [&](caf::error& err) { answer = std::move(err); });
  auto took = std::chrono::steady_clock::now() - started;
  // Assert: the node lives on (its gateway answered, not the request's
  // timeout) and logged one line per second at most, naming the sender's
  // node and the fix.
  EXPECT_EQ(answer,
            caf::make_error(ferry::errc::no_such_actor, answer.context()))
    << ferry::render(answer);
  std::vector<std::string> dropped;
  {
    std::lock_guard<std::mutex> guard{log->mtx};
    for (auto& line : log->lines)
      if (line.find("dropped a message") != std::string::npos)
        dropped.push_back(line);
  }
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(took).count();
  ASSERT_GE(dropped.size(), 1u);
  EXPECT_LE(dropped.size(), static_cast<size_t>(1 + seconds));
  EXPECT_NE(dropped[0].find("skipped ferry's handshake"), std::string::npos)
    << dropped[0];
  caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
}

TEST_F(hostile_fixture, HelloWithMoreTypeNamesThanShapesIsRefused) {
  // Arrange
  type_names_ = {"test.record", "string"};
  type_shapes_ = {"{id:i64}"};
  caf::error refusal;
  // Act
  auto target = handshake(wire_protocol_version, &refusal);
  // Assert
  EXPECT_EQ(target, 0u);
  EXPECT_EQ(refusal,
            caf::make_error(ferry::errc::handshake_failed, refusal.context()));
  EXPECT_TRUE(mentions(refusal, "2 type names but 1 type shapes"))
    << ferry::render(refusal);
  // The node lives on.
  type_names_.clear();
  type_shapes_.clear();
  EXPECT_NE(handshake(), 0u);
}

TEST_F(hostile_fixture, TypeOfAnotherShapeIsRefusedBeforeItsBytesAreDecoded) {
  // Arrange: "rogue" describes test.plain_point otherwise than the peer's
  // build does ({x:i32,label:str,values:list<f64>}).
  type_names_ = {"test.plain_point"};
  type_shapes_ = {"{x:i32,label:str}"};
  auto target = handshake();
  ASSERT_NE(target, 0u);
  wire_message msg;
  msg.target = target;
  // Bytes no decoder would take: a decode would fail with decode_failed.
  msg.elements.push_back(element("msgpack", "test.plain_point",
                                 std::vector<std::byte>(9, std::byte{0xc1})));
  // Act
  auto err = send_and_await_error(std::move(msg));
  // Assert
  ASSERT_TRUE(err);
  EXPECT_EQ(err, caf::make_error(ferry::errc::type_mismatch, err.context()));
  auto text = ferry::render(err);
  EXPECT_NE(text.find("type \"test.plain_point\" has another shape"),
            std::string::npos)
    << text;
  EXPECT_NE(text.find("member 'test.plain_point.values' (list<f64>) exists on "
                      "node B but not on node rogue"),
            std::string::npos)
    << text;
  // The node lives on: a message of a type both describe alike still works.
  EXPECT_FALSE(send_and_await_error(refused_for_its_family(target))
                 == caf::make_error(ferry::errc::type_mismatch));
}
