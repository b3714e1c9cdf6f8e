// The metrics endpoint of a node in this process: on when configured, off
// otherwise, a typed error when it cannot listen, and the figures it shows
// readable from code through `link_stats`.
#include "../framework/two_nodes.hpp"
#include "http_exchange.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace std::chrono_literals;

using ferry::test::exchange;

/// Starts a node named `name` (no store) with its endpoint on a free port.
std::unique_ptr<ferry::node> node_with_endpoint(const char* name,
                                                ferry::node_config& cfg) {
  cfg.metrics_port = 0;
  return ferry::test::make_node(name, cfg);
}

caf::behavior echo() {
  return {[](int32_t x) { return x + 1; }};
}

TEST(metrics_endpoint, IsOffWhenNoPortIsSet) {
  ferry::node_config cfg;
  auto sut = ferry::test::make_node("sut", cfg);
  ASSERT_TRUE(sut);
  EXPECT_EQ(sut->metrics_port(), 0);
}

TEST(metrics_endpoint, PortZeroServesOnAPortTheNodeReports) {
  ferry::node_config cfg;
  auto sut = node_with_endpoint("sut", cfg);
  ASSERT_TRUE(sut);
  ASSERT_NE(sut->metrics_port(), 0);
  auto answer = exchange(sut->metrics_port(),
                         "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n");
  EXPECT_EQ(answer.rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << answer;
  EXPECT_NE(answer.find("\r\n\r\n# HELP ferry_node_info"), std::string::npos)
    << answer;
  EXPECT_NE(answer.find("ferry_node_info{node=\"sut\"} 1\n"),
            std::string::npos);
  EXPECT_NE(answer.find("\nprocess_resident_memory_bytes "),
            std::string::npos);
}

TEST(metrics_endpoint, AnswersOtherPathsWith404AndOtherMethodsWith405) {
  ferry::node_config cfg;
  auto sut = node_with_endpoint("sut", cfg);
  ASSERT_TRUE(sut);
  auto port = sut->metrics_port();
  EXPECT_EQ(
    exchange(port, "GET /admin HTTP/1.0\r\n\r\n").rfind("HTTP/1.0 404", 0),
    0u);
  EXPECT_EQ(exchange(port, "PUT /metrics HTTP/1.0\r\n\r\n")
              .rfind("HTTP/1.0 405", 0),
            0u);
}

TEST(metrics_endpoint, APortInUseFailsTheStartNamingOptionAddressAndPort) {
  ferry::node_config first_cfg;
  auto first = node_with_endpoint("first", first_cfg);
  ASSERT_TRUE(first);
  auto taken = first->metrics_port();
  ferry::node_config cfg;
  cfg.node_name = "sut";
  cfg.store_enabled = false;
  cfg.metrics_port = taken;
  auto sut = ferry::node::start(cfg);
  ASSERT_FALSE(sut);
  EXPECT_EQ(sut.error(), caf::make_error(ferry::errc::invalid_config,
                                         sut.error().context()));
  auto text = ferry::render(sut.error());
  EXPECT_NE(text.find("ferry.metrics.port"), std::string::npos) << text;
  EXPECT_NE(text.find("127.0.0.1:" + std::to_string(taken)), std::string::npos)
    << text;
  EXPECT_NE(text.find("in use"), std::string::npos) << text;
}

TEST(metrics_endpoint, APortAboveTheRangeIsInvalidConfig) {
  ferry::node_config cfg;
  const char* argv[] = {"sut", "--ferry.metrics.port=70000"};
  ASSERT_FALSE(cfg.parse(2, const_cast<char**>(argv)));
  auto sut = ferry::node::start(cfg);
  ASSERT_FALSE(sut);
  EXPECT_NE(ferry::render(sut.error()).find("ferry.metrics.port"),
            std::string::npos);
}

TEST(metrics_endpoint, AnAddressThatIsNoIpIsInvalidConfig) {
  ferry::node_config cfg;
  cfg.metrics_port = 0;
  cfg.metrics_address = "not an address";
  cfg.store_enabled = false;
  auto sut = ferry::node::start(cfg);
  ASSERT_FALSE(sut);
  EXPECT_NE(ferry::render(sut.error()).find("ferry.metrics.address"),
            std::string::npos);
}

class metrics_stats : public ferry::test::two_nodes {};

TEST_F(metrics_stats, CountEncodeAndDecodeTimesAndBatchSizes) {
  ASSERT_TRUE(start());
  auto proxy = ferry::test::connect(*server, *client,
                                    server->system().spawn(echo));
  ASSERT_TRUE(proxy) << ferry::render(proxy.error());
  caf::scoped_actor self{client->system()};
  constexpr int n = 25;
  for (int i = 0; i < n; ++i)
    self->request(*proxy, 10s, int32_t{i}).receive([](int32_t) {},
                                                   [](caf::error&) {});
  auto sent = client->stats("server");
  auto received = server->stats("client");
  ASSERT_TRUE(sent && received);
  ASSERT_EQ(sent->encode_seconds.size(), 1u);
  auto& [family, encode] = *sent->encode_seconds.begin();
  EXPECT_EQ(encode.count, uint64_t{n});
  EXPECT_EQ(sent->sent_by_family.at(family), uint64_t{n});
  EXPECT_GT(encode.sum, 0.0);
  ASSERT_EQ(received->decode_seconds.count(family), 1u);
  EXPECT_EQ(received->decode_seconds.at(family).count, uint64_t{n});
  // Every message sent counts once in the batch sizes.
  EXPECT_EQ(sent->batch_messages.sum, static_cast<double>(n));
  EXPECT_EQ(sent->messages_sent, uint64_t{n});
  auto text = client->metrics_text();
  EXPECT_NE(text.find("ferry_link_messages_sent_total{peer=\"server\",family=\""
                      + family + "\"} " + std::to_string(n) + "\n"),
            std::string::npos)
    << text;
  EXPECT_NE(text.find("ferry_link_refusals_total{peer=\"server\",reason="
                      "\"receiver_full\"} 0\n"),
            std::string::npos);
  EXPECT_NE(text.find("ferry_links{state=\"up\"} 1\n"), std::string::npos);
}

} // namespace
