// Two nodes in really separate network stacks: the peer runs in a network
// namespace of the test's own, reached over a veth pair. As root the test
// makes the namespace directly; otherwise it runs itself again inside a user
// namespace of its own (`unshare --user --map-root-user --mount --net`, which
// Debian allows unprivileged users), where it is root of a private network
// stack. It fails, never skips, where neither works.
#include "node_fixture.hpp"

#include <cstdlib>
#include <filesystem>

#include <sys/mount.h>

using namespace ferry::test;

namespace {

/// Set in the environment of the run inside the user namespace.
constexpr const char* inner_run = "FERRY_NETNS_TEST_INNER";

std::string find_tool(std::initializer_list<const char*> paths) {
  for (auto path : paths)
    if (std::filesystem::exists(path))
      return path;
  return {};
}

std::string ip_tool() {
  return find_tool({"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"});
}

/// Runs `ip args...`; returns true on exit code 0.
bool ip(const std::vector<std::string>& args) {
  child_process proc{ip_tool(), args};
  proc.close_stdin();
  return proc.wait(10s).ok();
}

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
      ip({"link", "del", veth_ + "a"});
      ip({"netns", "del", ns_});
    }
  }

  /// Creates the namespace and a veth pair 10.213.<x>.1 <-> .2; returns the
  /// reason when the machine does not allow it.
  std::string set_up() {
    if (ip_tool().empty())
      return "the ip tool (iproute2) is not installed";
    if (std::getenv(inner_run) != nullptr) {
      // Root of a user namespace owns its network stack but not the host's
      // /run, where `ip netns` keeps its files: give it a /run of its own.
      if (::mount("none", "/run", "tmpfs", 0, nullptr) != 0)
        return "cannot mount a tmpfs on /run in the user namespace";
      if (!ip({"link", "set", "lo", "up"}))
        return "cannot bring up lo in the user namespace";
    }
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

  /// Runs this test again, as root of a user namespace with its own
  /// network and mount namespaces, and asserts that it passed there.
  void run_in_user_namespace() {
    auto unshare = find_tool({"/usr/bin/unshare", "/bin/unshare"});
    ASSERT_FALSE(unshare.empty()) << "unshare (util-linux) is not installed";
    auto* info = testing::UnitTest::GetInstance()->current_test_info();
    auto self = std::filesystem::read_symlink("/proc/self/exe").string();
    setenv(inner_run, "1", 1);
    child_process inner{unshare,
                        {"--user", "--map-root-user", "--mount", "--net",
                         self,
                         std::string{"--gtest_filter="}
                           + info->test_suite_name() + "." + info->name()}};
    unsetenv(inner_run);
    inner.close_stdin();
    std::string output;
    while (auto line = inner.read_line(120s))
      output += *line + "\n";
    auto status = inner.wait(10s);
    EXPECT_TRUE(status.ok())
      << "the test run inside a user namespace ended with "
      << to_string(status)
      << " (if unshare failed, unprivileged user namespaces are off: allow "
         "them with sysctl kernel.unprivileged_userns_clone=1 or run as "
         "root):\n"
      << output;
    EXPECT_NE(output.find("[  PASSED  ] 1 test."), std::string::npos)
      << "the run inside the user namespace did not pass this test:\n"
      << output;
  }

  std::string ns_;
  std::string veth_;
  std::string local_address_;
  std::string peer_address_;
  bool created_ = false;
};

} // namespace

TEST_F(netns_fixture, NodesInSeparateNetworkStacksTalkAcrossTheVethPair) {
  // Arrange
  if (geteuid() != 0) {
    run_in_user_namespace();
    return;
  }
  auto reason = set_up();
  ASSERT_TRUE(reason.empty())
    << reason
    << "; this test needs network namespaces: run it as root, or allow "
       "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)";
  setenv("FERRY_TEST_PUBLISH_ADDRESS", peer_address_.c_str(), 1);
  child_process peer{ip_tool(),
                     {"netns", "exec", ns_, FERRY_TEST_NODE,
                      "--ferry.node-name=far", "--ferry.host-id=far-host",
                      "--ferry.store.name=" + store_name_ + "-far"}};
  unsetenv("FERRY_TEST_PUBLISH_ADDRESS");
  auto port = peer.wait_for("port ");
  ASSERT_TRUE(port) << "peer in the namespace did not start";
  auto sut = local().remote_actor(peer_address_,
                                  static_cast<uint16_t>(std::stoi(*port)));
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  auto payload = make_bytes(12 << 20); // pulled in chunks across the veth
  // Act
  auto text = ask<std::string>(*sut, std::string{"netns"});
  auto hash = ask<uint64_t>(*sut, payload);
  // Assert
  ASSERT_TRUE(text) << ferry::render(text.error());
  EXPECT_EQ(*text, "snten");
  ASSERT_TRUE(hash) << ferry::render(hash.error());
  EXPECT_EQ(*hash, fnv1a(payload));
  auto stats = local().stats("far");
  ASSERT_TRUE(stats);
  EXPECT_FALSE(stats->same_host);
  EXPECT_EQ(stats->bytes_pulled_by_peer, uint64_t{12} << 20);
  peer.close_stdin();
  EXPECT_TRUE(peer.wait(10s).ok());
}
