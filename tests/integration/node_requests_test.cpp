// Requests between a local node and peer processes, and what each link
// decides about them: typed responses over links of different families at
// once, a peer refusing a family (the next one serves), no common family
// (the handshake fails naming both lists), an unregistered type, atoms and
// multi-element messages, three nodes, a node without a default actor, one
// proxy per remote sender, a response this node cannot decode (the request
// fails at once), and refusals logged at most once a second, all counted.
//
// Each test runs a local node in the test process and starts peers
// (ferry_test_node) as child processes (node_fixture.hpp).
#include "node_fixture.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include "ferry/test/eventually.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using namespace ferry::test;

TEST_F(node_fixture, RequestsAcrossProcessesGetTypedResponses) {
  // Arrange
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  // Act
  auto text = ask<std::string>(*sut, std::string{"ferry"});
  auto number = ask<int32_t>(*sut, int32_t{41});
  auto rec = ask<ferry::test::record>(*sut, ferry::test::make_record(7, 256));
  // Assert
  ASSERT_TRUE(text) << ferry::render(text.error());
  EXPECT_EQ(*text, "yrref");
  ASSERT_TRUE(number) << ferry::render(number.error());
  EXPECT_EQ(*number, 42);
  ASSERT_TRUE(rec) << ferry::render(rec.error());
  auto expected = ferry::test::make_record(7, 256);
  expected.id = 8;
  EXPECT_EQ(*rec, expected);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->messages_sent, 3u);
  EXPECT_EQ(stats->messages_received, 3u);
  EXPECT_EQ(stats->pending_requests, 0u);
}

TEST_F(node_fixture, LinksOfOneNodeUseDifferentFamiliesAtOnce) {
  // Arrange
  auto& b = start_peer("B");
  auto& c = start_peer("C");
  ferry::link_config to_b;
  to_b.serializers = {"cereal.portable"};
  ferry::link_config to_c;
  to_c.serializers = {"msgpack"};
  cfg.link("B", to_b).link("C", to_c);
  auto proxy_b = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(proxy_b) << ferry::render(proxy_b.error());
  auto proxy_c = local().remote_actor("127.0.0.1", c.port);
  ASSERT_TRUE(proxy_c) << ferry::render(proxy_c.error());
  // Act
  auto from_b = ask<ferry::test::record>(*proxy_b, ferry::test::make_record(1, 8));
  auto from_c = ask<ferry::test::record>(*proxy_c, ferry::test::make_record(2, 8));
  // Assert
  ASSERT_TRUE(from_b) << ferry::render(from_b.error());
  ASSERT_TRUE(from_c) << ferry::render(from_c.error());
  EXPECT_EQ(from_b->id, 2);
  EXPECT_EQ(from_c->id, 3);
  auto stats_b = local().stats("B");
  auto stats_c = local().stats("C");
  ASSERT_TRUE(stats_b && stats_c);
  EXPECT_EQ(stats_b->sent_by_family["cereal.portable"], 1u);
  EXPECT_EQ(stats_c->sent_by_family["msgpack"], 1u);
  EXPECT_NE(b.stats()["local"].find("in:cereal.portable=1"), std::string::npos);
  EXPECT_NE(c.stats()["local"].find("in:msgpack=1"), std::string::npos);
}

TEST_F(node_fixture, PeerThatRefusesAFamilyGetsTheNextOne) {
  // Arrange: C refuses cereal.binary; local prefers it.
  auto& c = start_peer("C", {"--ferry.link.deserializers=[\"msgpack\", \"caf\"]"});
  cfg.default_link.serializers = {"cereal.binary", "msgpack"};
  auto sut = local().remote_actor("127.0.0.1", c.port);
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  // Act
  auto rec = ask<ferry::test::record>(*sut, ferry::test::make_record(5, 4));
  auto only_cereal = ask<int32_t>(*sut, ferry::test::cereal_only{21});
  // Assert
  ASSERT_TRUE(rec) << ferry::render(rec.error());
  auto stats = local().stats("C");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->send_families, std::vector<std::string>{"msgpack"});
  EXPECT_EQ(stats->sent_by_family["msgpack"], 1u);
  ASSERT_FALSE(only_cereal);
  EXPECT_EQ(only_cereal.error().category(), caf::atom("ferry_ser"));
  EXPECT_NE(ferry::render(only_cereal.error()).find("test.cereal_only"),
            std::string::npos)
    << ferry::render(only_cereal.error());
}

TEST_F(node_fixture, HandshakeWithoutCommonFamilyFailsNamingBothLists) {
  // Arrange
  auto& c = start_peer("C", {"--ferry.link.deserializers=[\"msgpack\"]"});
  cfg.default_link.serializers = {"cereal.binary"};
  // Act
  auto sut = local().remote_actor("127.0.0.1", c.port);
  // Assert
  ASSERT_FALSE(sut);
  EXPECT_EQ(sut.error(), caf::make_error(ferry::errc::no_common_family,
                                         sut.error().context()));
  auto text = ferry::render(sut.error());
  EXPECT_NE(text.find("[cereal.binary]"), std::string::npos) << text;
  EXPECT_NE(text.find("[msgpack]"), std::string::npos) << text;
}

TEST_F(node_fixture, RemoteSenderKeepsOneProxyAcrossMessages) {
  // Arrange: one sender; nothing on B holds the proxy that stands for it
  // there between its two requests.
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port, "mirror");
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  caf::scoped_actor self{local().system()};
  auto ask_id = [&](int64_t x) {
    uint64_t id = 0;
    self->request(*sut, 30s, x).receive([&](uint64_t y) { id = y; },
                                        [&](caf::error&) {});
    return id;
  };
  // Act
  auto first = ask_id(1);
  auto second = ask_id(2);
  // Assert
  EXPECT_NE(first, 0u);
  EXPECT_EQ(first, second);
}

TEST_F(node_fixture, UnregisteredTypeFailsWithHowToFix) {
  // Arrange
  struct not_registered {
    int x;
  };
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  // Act
  auto reply = ask<int32_t>(*sut, not_registered{1});
  // Assert
  ASSERT_FALSE(reply);
  auto text = ferry::render(reply.error());
  EXPECT_NE(text.find("add_message_type"), std::string::npos) << text;
}

TEST_F(node_fixture, ThreeNodesExchangeThroughTheirOwnLinks) {
  // Arrange
  auto& b = start_peer("B");
  auto& c = start_peer("C");
  auto proxy_b = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(proxy_b) << ferry::render(proxy_b.error());
  auto proxy_c = local().remote_actor("127.0.0.1", c.port);
  ASSERT_TRUE(proxy_c) << ferry::render(proxy_c.error());
  // Act
  auto reply_b = ask<std::string>(*proxy_b, std::string{"abc"});
  auto reply_c = ask<std::string>(*proxy_c, std::string{"xyz"});
  // Assert
  ASSERT_TRUE(reply_b && reply_c);
  EXPECT_EQ(*reply_b, "cba");
  EXPECT_EQ(*reply_c, "zyx");
  EXPECT_EQ(local().stats().size(), 2u);
}

TEST_F(node_fixture, AtomsAndMultiElementMessagesCrossTheLink) {
  // Arrange
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port, "adder-by-atom");
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  // Act
  auto sum = ask<int32_t>(*sut, caf::atom("add"), int32_t{20}, int32_t{22});
  // Assert
  ASSERT_TRUE(sum) << ferry::render(sum.error());
  EXPECT_EQ(*sum, 42);
}

TEST_F(node_fixture, NodeWithoutDefaultActorStillServesExposedOnes) {
  // Arrange
  auto& b = start_peer("B");
  cfg.store_enabled = false;
  auto port = local().publish(caf::actor{});
  // Act
  auto to_b = local().remote_actor("127.0.0.1", b.port);
  // Assert
  ASSERT_TRUE(port) << ferry::render(port.error());
  ASSERT_TRUE(to_b) << ferry::render(to_b.error());
}

TEST_F(node_fixture, ResponseThisNodeCannotDecodeFailsTheRequestAtOnce) {
  // Arrange: this node decodes at most 4 KiB; B answers with 100,000 bytes.
  cfg.default_link.max_message_size = 4096;
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  // Act
  auto reply = ask_within<std::vector<std::byte>>(10s, *sut, uint64_t{100000},
                                                  int32_t{7});
  // Assert: the decoding error, not the request's timeout.
  ASSERT_FALSE(reply);
  EXPECT_NE(reply.error(), caf::make_error(caf::sec::request_timeout))
    << ferry::render(reply.error());
  EXPECT_EQ(reply.error(), caf::make_error(ferry::errc::message_too_large,
                                          reply.error().context()));
  EXPECT_NE(ferry::render(reply.error())
              .find("above node local's max-message-size of 4096 bytes"),
            std::string::npos)
    << ferry::render(reply.error());
}

TEST_F(node_fixture, RefusalsReachTheLogAtMostOnceASecondAndAllAreCounted) {
  // Arrange: a type only this node registers makes B refuse every one-way
  // message of it; this node's log goes to a sink the test reads. (How the
  // lines left out are counted into the next line: log_limiter_test.cpp,
  // on a manual clock.)
  cfg.add_message_type<std::vector<uint16_t>>("test.only_here");
  // Shared with the sink: the node may still log after the test's body.
  struct log_lines {
    std::mutex mtx;
    std::vector<std::string> lines;
  };
  auto log = std::make_shared<log_lines>();
  cfg.log_sink = [log](const std::string& line) {
    std::lock_guard<std::mutex> guard{log->mtx};
    log->lines.push_back(line);
  };
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  caf::scoped_actor self{local().system()};
  auto refused_by_b = [&] {
    auto stats = local().stats("B");
    return stats ? stats->refused_by_peer : 0;
  };
  // Act: 100 refused messages at once.
  auto started = std::chrono::steady_clock::now();
  for (uint16_t i = 0; i < 100; ++i)
    self->send(*sut, std::vector<uint16_t>{i});
  ASSERT_TRUE(ferry::test::eventually([&] { return refused_by_b() >= 100; }));
  auto burst = std::chrono::steady_clock::now() - started;
  // Assert: every refusal counted, one line per started second of the
  // burst at most, each naming the type.
  std::vector<std::string> refusals;
  {
    std::lock_guard<std::mutex> guard{log->mtx};
    for (auto& line : log->lines)
      if (line.find("node B refused a message") != std::string::npos)
        refusals.push_back(line);
  }
  EXPECT_EQ(refused_by_b(), 100u);
  ASSERT_GE(refusals.size(), 1u);
  auto burst_seconds
    = std::chrono::duration_cast<std::chrono::seconds>(burst).count();
  EXPECT_LE(refusals.size(), static_cast<size_t>(1 + burst_seconds));
  for (auto& line : refusals) {
    EXPECT_EQ(line.rfind("ferry[local]: ", 0), 0u) << line;
    EXPECT_NE(line.find("test.only_here"), std::string::npos) << line;
  }
}
