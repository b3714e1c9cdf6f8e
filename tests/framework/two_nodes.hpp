// Two ferry nodes in one process, connected over loopback by a TCP
// connection like any two nodes (no store: large frames travel inline), or
// sharing a store of the test's own, which links them through a same-host
// lane.
#pragma once

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/store/object_store.hpp"
#include "ferry/test/eventually.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace ferry::test {

/// Starts a node without a store (with the store `store` when not empty);
/// a small window (32 messages by default) makes senders contend for
/// credit.
inline std::unique_ptr<ferry::node> make_node(const char* name,
                                              ferry::node_config& cfg,
                                              uint64_t window_messages = 32,
                                              const std::string& store = {}) {
  cfg.node_name = name;
  cfg.store_enabled = !store.empty();
  if (!store.empty()) {
    cfg.store_name = store;
    cfg.store_capacity = uint64_t{64} << 20;
  }
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
  return ferry::test::eventually([&] { return !sut.stats(peer); },
                                 std::chrono::seconds{10});
}

/// A server and a client node in this process; tests set the configs,
/// then start both.
class two_nodes : public testing::Test {
protected:
  ~two_nodes() override {
    server.reset();
    client.reset();
    if (!shared_store.empty())
      static_cast<void>(ferry::store::object_store::remove(shared_store));
  }

  /// Starts both nodes with `window_messages`; false on failure.
  bool start(uint64_t window_messages = 32) {
    server = make_node("server", server_cfg, window_messages, shared_store);
    client = make_node("client", client_cfg, window_messages, shared_store);
    return server && client;
  }

  /// Makes `start` give both nodes one store of this test's own (so their
  /// link is a same-host lane).
  void share_store() {
    shared_store = "ferry-test-" + std::to_string(::getpid()) + "-" +
                   std::to_string(++stores_made);
  }

  inline static int stores_made = 0;
  std::string shared_store;

  ferry::node_config server_cfg;
  ferry::node_config client_cfg;
  std::unique_ptr<ferry::node> server;
  std::unique_ptr<ferry::node> client;
};

} // namespace ferry::test
