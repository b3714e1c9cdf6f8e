// Hosts of their own on one machine, for the `netns` rows.
//
// Over loopback every node of a row shares one network stack and the same
// two cores, so a row whose point is a host's link (a broadcast: the owner
// should send an object once, not once per receiver) measures CPU instead.
// `emulated_hosts` gives each node a host of its own: a network namespace
// with one interface (`eth0`, 10.77.0.<i+1>/24), cabled to a bridge in a
// namespace of its own (the switch), each cable shaped to a rate in both
// directions (tc tbf on both ends of the veth pair): upload and download of
// every host are limited as a network card limits them.
//
// Making namespaces needs root of a network stack. ferry-bench gets that as
// the machine allows (`enter_root_of_network_stack`): as root it goes on; as
// another user it runs itself again inside a user namespace (`unshare
// --user --map-root-user --mount --net`, which Debian allows unprivileged
// users), where it mounts a /run of its own for `ip netns`. The whole run
// then happens there; rows over loopback are unaffected (a network stack of
// their own, the same kernel code). Where neither works, the `netns` rows are
// skipped with the reason.
//
// The driver joins a host with `scoped_network_namespace` (this thread, and
// threads it starts meanwhile, live there); a peer process joins one before
// it starts anything (`enter_network_namespace`). Uses iproute2's `ip` and
// `tc`. Not thread-safe; includes no CAF header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ferry::bench {

/// Default rate of each host's link, each way (Mbit/s): a 1 Gbit/s card.
inline constexpr uint64_t default_host_link_mbit = 1000;

/// Makes this process root of its network stack, or says why it cannot.
/// As root, returns "". As another user, with a working `unshare --user`,
/// replaces this process with itself run again inside a user namespace
/// (same arguments; does not return), where the call mounts a tmpfs on /run
/// and returns "". Otherwise returns the reason.
std::string enter_root_of_network_stack(int argc, char** argv);

/// Moves the calling thread into the network namespace at `path`; returns
/// "" or the reason it failed.
std::string enter_network_namespace(const std::string& path);

/// The calling thread lives in another network namespace until destroyed,
/// then returns to the one it came from. Throws std::runtime_error when it
/// cannot enter.
class scoped_network_namespace {
public:
  explicit scoped_network_namespace(const std::string& path);
  scoped_network_namespace(const scoped_network_namespace&) = delete;
  scoped_network_namespace& operator=(const scoped_network_namespace&)
    = delete;
  ~scoped_network_namespace();

private:
  int home_ = -1;
};

/// `count` hosts on a switch, each link shaped to `mbit` each way. Needs
/// root of the network stack (see `enter_root_of_network_stack`). The
/// namespaces are named after this process and numbered, so two runs (or
/// two networks of one run) never meet; the destructor deletes them.
class emulated_hosts {
public:
  /// Throws std::runtime_error naming the command that failed.
  emulated_hosts(int count, uint64_t mbit);
  emulated_hosts(const emulated_hosts&) = delete;
  emulated_hosts& operator=(const emulated_hosts&) = delete;
  ~emulated_hosts();

  /// Returns the path of host `i`'s namespace (/run/netns/...), 0-based.
  std::string namespace_path(int i) const;

  /// Returns host `i`'s address, 10.77.0.<i+1>.
  std::string address(int i) const;

  uint64_t mbit() const { return mbit_; }

private:
  /// Runs `tool args...`; throws with its stderr when it fails.
  void run(const std::string& tool, const std::vector<std::string>& args);

  std::string prefix_;
  std::vector<std::string> made_;
  uint64_t mbit_ = 0;
};

} // namespace ferry::bench
