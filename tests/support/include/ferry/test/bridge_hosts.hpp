// bridge_hosts: hosts made of network namespaces on one Linux bridge.
//
// `set_up` makes a namespace for the bridge (br0) and one namespace per host
// with a veth into the bridge and an address of its own (10.214.<pid>.<i+1>
// on a /24). `cut` moves some hosts' veth ends onto a second bridge (br1) in
// the same namespace, so those hosts still reach each other but not the
// rest (a partition, both ways at once); `heal` moves them back. The
// destructor deletes every namespace it made (with them the links in
// them). Used with FERRY_RUN_WITH_NETWORK_NAMESPACES (ferry/test/
// namespaces.hpp), which decides whether the test may make namespaces.
//
// Thread-safety: one test thread owns one bridge_hosts.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ferry::test {

class bridge_hosts {
public:
  /// Names `count` hosts (the namespaces carry this process id).
  explicit bridge_hosts(size_t count);

  bridge_hosts(const bridge_hosts&) = delete;
  bridge_hosts& operator=(const bridge_hosts&) = delete;

  ~bridge_hosts();

  /// Makes the namespaces and the bridge; returns the reason when the
  /// machine does not allow it (empty: done).
  std::string set_up();

  /// Returns the namespace of host `i`.
  const std::string& ns(size_t i) const {
    return namespaces_[i];
  }

  /// Returns the address of host `i`.
  const std::string& address(size_t i) const {
    return addresses_[i];
  }

  /// Returns the namespace that holds the bridges.
  const std::string& bridge_ns() const {
    return bridge_ns_;
  }

  /// Returns the name of host `i`'s veth end inside its own namespace.
  std::string inner(size_t i) const;

  /// Returns the name of host `i`'s veth end in the bridge's namespace.
  std::string outer(size_t i) const;

  /// Moves the hosts in `side` onto a bridge of their own. Returns false
  /// when `ip` failed.
  [[nodiscard]] bool cut(const std::vector<size_t>& side);

  /// Puts every host back on the first bridge.
  [[nodiscard]] bool heal();

private:
  bool make_namespace(const std::string& ns);

  std::string tag_;
  std::string bridge_ns_;
  std::vector<std::string> namespaces_;
  std::vector<std::string> addresses_;
  std::vector<std::string> created_;
};

} // namespace ferry::test
