// Who a ferry node lets onto a link, and what it believes of what comes on
// a connection. An intro of another wire protocol is refused naming both
// versions; an intro claiming the node's own id is refused; a second
// connection of a linked peer is refused `already_linked`, and nothing it
// sends reaches the link (a forged answer to a request of the link
// included); answers to requests the node never made are dropped and
// counted; frames before the handshake close the connection, logged at most
// once a second; a hello whose type lists do not pair up is refused; a type
// the hello describes with another shape is refused before its bytes are
// decoded. The node lives on after each.
#include "hostile_peer.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

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
using ferry::test::rogue_connection;

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
  EXPECT_NE(text.find("node 'rogue'"), std::string::npos) << text;
  EXPECT_NE(text.find("run the same ferry version"), std::string::npos)
    << text;
  // The node lives on: a peer with the right protocol gets in.
  EXPECT_NE(handshake(), 0u);
}

TEST_F(hostile_fixture, IntroClaimingTheNodesOwnIdIsRefused) {
  // Arrange: "rogue" reads the node's intro first, then claims its id (a
  // link is keyed by the peer's id: accepting would make a link to the
  // node itself).
  conn_ = std::make_unique<rogue_connection>(port_);
  conn_->send_raw(wire::preface);
  auto theirs = conn_->next_of(wire::frame_type::intro);
  ASSERT_TRUE(theirs);
  auto them = theirs->as<intro>();
  ASSERT_TRUE(them);
  conn_->send_control(rogue_intro(wire_protocol_version, them->node_id));
  // Act
  auto answer = conn_->next_of(wire::frame_type::refuse);
  // Assert
  ASSERT_TRUE(answer) << "the peer took the intro";
  auto why = answer->as<refuse>();
  ASSERT_TRUE(why);
  EXPECT_TRUE(mentions(why->reason, "connected to itself"))
    << ferry::render(why->reason);
  EXPECT_TRUE(conn_->await_close());
  EXPECT_EQ(peer_link_stats(), "");
  EXPECT_NE(handshake(), 0u) << "the node lives on";
}

TEST_F(hostile_fixture, SecondConnectionOfALinkedPeerIsRefusedAndCarriesNothing) {
  // Arrange: a link to "rogue" is up on the first connection.
  auto target = handshake();
  ASSERT_NE(target, 0u);
  auto first = std::move(conn_);
  // Act: a second connection in "rogue"'s name (a peer whose old link is
  // gone on its side only, or a third node posing as it) handshakes, then
  // sends a message and an answer to a request of the link.
  caf::error refusal;
  auto again = handshake(wire_protocol_version, &refusal);
  conn_->send_message(refused_for_its_family(target));
  conn_->send_control(actor_id_answer{1, 2});
  // Assert: refused, closed, and nothing it sent reached the link; the
  // first connection's link still answers.
  EXPECT_EQ(again, 0u);
  EXPECT_EQ(refusal,
            caf::make_error(ferry::errc::already_linked, refusal.context()));
  EXPECT_TRUE(conn_->await_close());
  conn_ = std::move(first);
  auto answer = send_and_await_error(refused_for_its_family(target));
  EXPECT_EQ(answer, caf::make_error(ferry::errc::family_refused,
                                    answer.context()));
  auto stats = peer_link_stats();
  EXPECT_NE(stats.find(" refusals=1 "), std::string::npos) << stats;
  EXPECT_NE(stats.find(" unasked=0"), std::string::npos) << stats;
}

TEST_F(hostile_fixture, AnswersToRequestsNeverMadeAreDroppedAndCounted) {
  // Arrange: a link; answers naming request ids the node never used.
  auto target = handshake();
  ASSERT_NE(target, 0u);
  // Act
  conn_->send_control(actor_id_answer{0x1234, 5});
  conn_->send_control(failed_answer{0x1235, caf::sec::runtime_error});
  conn_->send(chunk_frame(0x1236, std::vector<std::byte>(100), nullptr));
  auto answer = send_and_await_error(refused_for_its_family(target));
  // Assert: the link goes on (the request is answered after them), each
  // answer counted once.
  EXPECT_EQ(answer, caf::make_error(ferry::errc::family_refused,
                                    answer.context()));
  auto stats = await_peer_stats(" unasked=3");
  EXPECT_NE(stats.find(" unasked=3"), std::string::npos) << stats;
}

TEST_F(hostile_fixture, LinkFramesBeforeTheHandshakeCloseTheConnection) {
  // Arrange: a connection that sends its preface and then a message, with
  // no intro.
  rogue_connection rude{port_};
  rude.send_raw(wire::preface);
  // Act
  rude.send_message(refused_for_its_family(1));
  // Assert: closed without an answer; the node lives on.
  EXPECT_TRUE(rude.await_close());
  EXPECT_EQ(peer_link_stats(), "");
  EXPECT_NE(handshake(), 0u);
}

TEST(unlinked_peer, ConnectionsBreakingTheHandshakeAreLoggedOnceASecond) {
  // Arrange: a ferry node in this process whose log the test reads.
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
  // Act: 50 connections that send garbage instead of the preface.
  auto started = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<rogue_connection>> rude;
  for (int i = 0; i < 50; ++i) {
    rude.push_back(std::make_unique<rogue_connection>(*port));
    std::string garbage = "GET / HTTP/1.1\r\n\r\n";
    rude.back()->send_raw(std::as_bytes(std::span{garbage}));
  }
  for (auto& x : rude)
    EXPECT_TRUE(x->await_close());
  auto took = std::chrono::steady_clock::now() - started;
  // Assert: the node lives on and logged one line per second at most,
  // naming what was wrong.
  std::vector<std::string> closed;
  {
    std::lock_guard<std::mutex> guard{log->mtx};
    for (auto& line : log->lines)
      if (line.find("before its handshake") != std::string::npos)
        closed.push_back(line);
  }
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(took).count();
  ASSERT_GE(closed.size(), 1u);
  EXPECT_LE(closed.size(), static_cast<size_t>(1 + seconds));
  EXPECT_NE(closed[0].find("does not speak ferry's protocol"),
            std::string::npos)
    << closed[0];
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
