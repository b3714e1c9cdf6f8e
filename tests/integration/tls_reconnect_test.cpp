// A TLS connect that CAF closes at a heartbeat tick before the peer has
// answered its handshake (CAF 0.17 has no time of last contact for a
// connection it opened until the peer's first bytes; node/transport.cpp):
// the node connects again, over TLS as before, and the link works. The
// plain-link case is link_test.cpp's.
#include "tls_nodes.hpp"

#include "ferry/test/tcp_relay.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace std::chrono_literals;
using namespace ferry::test::tls;
using ferry::test::tcp_relay;

TEST(tls_reconnect, ConnectOutlastsAHeartbeatThatFallsBeforeThePeerAnswers) {
  // Arrange: heartbeats every 100 ms; the relay holds the server's answer
  // on the first connection for 500 ms, so ticks fall before the TLS and
  // CAF handshakes end, and CAF closes that connection at the first.
  tls_node server{"alpha", "alpha"};
  tls_node client{"beta", "beta"};
  for (auto* n : {&server, &client}) {
    n->cfg.set("middleman.heartbeat-interval", caf::timespan{100ms});
    n->cfg.set("middleman.connection-timeout", caf::timespan{10s});
  }
  ASSERT_EQ(server.start(), caf::none);
  ASSERT_EQ(client.start(), caf::none);
  auto port = server.serve();
  tcp_relay relay{port};
  relay.hold_next_answer(500ms);
  // Act
  auto proxy = client.node->remote_actor("127.0.0.1", relay.port());
  // Assert: linked on a later connection, verified, carrying requests.
  ASSERT_TRUE(proxy) << text_of(proxy.error());
  EXPECT_GE(relay.connections(), 2);
  EXPECT_EQ(ask_text(*client.node, *proxy, "hello"), std::string{"olleh"});
  // The connection closed at the tick is no refusal on either side.
  EXPECT_EQ(client.refusals(), 0u);
  EXPECT_EQ(server.refusals(), 0u);
}

} // namespace
