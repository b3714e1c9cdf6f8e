// A TLS connect whose peer answers slowly: the TLS handshake and ferry's
// handshake have the handshake timeout, and heartbeats start with the link,
// so a peer that answers after several heartbeat intervals still links on
// the one connection, verified, with no refusal on either side. The plain
// case is link_test.cpp's.
#include "tls_nodes.hpp"

#include "ferry/test/tcp_relay.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace std::chrono_literals;
using namespace ferry::test::tls;
using ferry::test::tcp_relay;

TEST(tls_reconnect, SlowAnswerBeyondTheHeartbeatsLinksOnTheOneConnection) {
  // Arrange: heartbeats every 100 ms; the relay holds the server's first
  // bytes on the connection for 500 ms.
  tls_node server{"alpha", "alpha"};
  tls_node client{"beta", "beta"};
  for (auto* n : {&server, &client}) {
    n->cfg.default_link.heartbeat_interval = 100ms;
    n->cfg.default_link.connection_timeout = 10s;
  }
  ASSERT_EQ(server.start(), caf::none);
  ASSERT_EQ(client.start(), caf::none);
  auto port = server.serve();
  tcp_relay relay{port};
  relay.hold_next_answer(500ms);
  // Act
  auto proxy = client.node->remote_actor("127.0.0.1", relay.port());
  // Assert: linked, verified, carrying requests.
  ASSERT_TRUE(proxy) << text_of(proxy.error());
  EXPECT_EQ(relay.connections(), 1);
  EXPECT_EQ(ask_text(*client.node, *proxy, "hello"), std::string{"olleh"});
  EXPECT_EQ(client.refusals(), 0u);
  EXPECT_EQ(server.refusals(), 0u);
}

} // namespace
