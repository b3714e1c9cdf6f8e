// Two ferry nodes in one process, connected over loopback through CAF's
// middleman like any two nodes (no store: large frames travel inline).
#pragma once

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace ferry::test {

/// Starts a node without a store; a small window (32 messages by default)
/// makes senders contend for credit.
inline std::unique_ptr<ferry::node> make_node(const char* name,
                                              ferry::node_config& cfg,
                                              uint64_t window_messages = 32) {
  cfg.node_name = name;
  cfg.store_enabled = false;
  cfg.default_link.window_messages = window_messages;
  auto result = ferry::node::start(cfg);
  EXPECT_TRUE(result) << ferry::render(result.error());
  return result ? std::move(*result) : nullptr;
}

/// Publishes `worker` on `server` and returns the client's proxy for it.
inline caf::expected<caf::actor>
connect(ferry::node& server, ferry::node& client, const caf::actor& worker) {
  auto port = server.publish(worker);
  if (!port)
    return std::move(port.error());
  return client.remote_actor("127.0.0.1", *port);
}

/// Waits up to 10 s until `sut` holds no link to the node named `peer`;
/// returns whether it let go of it.
inline bool link_gone(const ferry::node& sut, const std::string& peer) {
  for (int i = 0; i < 10000; ++i) {
    if (!sut.stats(peer))
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  }
  return false;
}

/// A server and a client node in this process; tests set the configs,
/// then start both.
class two_nodes : public testing::Test {
protected:
  /// Starts both nodes with `window_messages`; false on failure.
  bool start(uint64_t window_messages = 32) {
    server = make_node("server", server_cfg, window_messages);
    client = make_node("client", client_cfg, window_messages);
    return server && client;
  }

  ferry::node_config server_cfg;
  ferry::node_config client_cfg;
  std::unique_ptr<ferry::node> server;
  std::unique_ptr<ferry::node> client;
};

} // namespace ferry::test
