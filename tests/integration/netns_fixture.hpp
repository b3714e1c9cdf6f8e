// A peer in a network namespace of the test's own, reached over a veth
// pair 10.213.<x>.1 <-> .2: two nodes in really separate network stacks.
// Tests using it start with FERRY_RUN_WITH_NETWORK_NAMESPACES() and skip
// (or fail with FERRY_REQUIRE_PRIVILEGED_TESTS=1) when `set_up` says why
// the machine does not allow it (ferry/test/namespaces.hpp). Not
// thread-safe: one test thread.
#pragma once

#include "node_fixture.hpp"

#include "ferry/test/namespaces.hpp"

namespace ferry::test {

class netns_fixture : public node_fixture {
protected:
  netns_fixture()
    : ns_("ferry-ns-" + std::to_string(getpid())),
      veth_("fv" + std::to_string(getpid() % 100000)) {
    // nop
  }

  ~netns_fixture() override {
    // The far node's store, also when an assertion ended the test early
    // (the peer process is gone by now).
    static_cast<void>(ferry::store::object_store::remove(store_name_ + "-far"));
    if (created_) {
      static_cast<void>(ip({"link", "del", veth_ + "a"}));
      static_cast<void>(ip({"netns", "del", ns_}));
    }
  }

  /// Creates the namespace and a veth pair 10.213.<x>.1 <-> .2; returns the
  /// reason when the machine does not allow it.
  std::string set_up() {
    if (!ip({"netns", "add", ns_}))
      return "cannot create a network namespace here (needs CAP_SYS_ADMIN)";
    created_ = true;
    auto net = "10.213." + std::to_string(getpid() % 250) + ".";
    local_address_ = net + "1";
    peer_address_ = net + "2";
    if (!ip({"link", "add", veth_ + "a", "type", "veth", "peer", "name",
             veth_ + "b"})
        || !ip({"link", "set", veth_ + "b", "netns", ns_})
        || !ip({"addr", "add", local_address_ + "/30", "dev", veth_ + "a"})
        || !ip({"link", "set", veth_ + "a", "up"})
        || !ip({"netns", "exec", ns_, "ip", "addr", "add",
                peer_address_ + "/30", "dev", veth_ + "b"})
        || !ip({"netns", "exec", ns_, "ip", "link", "set", veth_ + "b", "up"})
        || !ip({"netns", "exec", ns_, "ip", "link", "set", "lo", "up"}))
      return "cannot set up a veth pair into the namespace";
    return {};
  }

  std::string ns_;
  std::string veth_;
  std::string local_address_;
  std::string peer_address_;
  bool created_ = false;
};


} // namespace ferry::test
