// bridge_hosts: see bridge_hosts.hpp.
#include "ferry/test/bridge_hosts.hpp"

#include "ferry/test/namespaces.hpp"

#include <unistd.h>

namespace ferry::test {

namespace {

std::string veth_prefix() {
  return "fb" + std::to_string(getpid() % 100000);
}

} // namespace

bridge_hosts::bridge_hosts(size_t count)
  : tag_(std::to_string(getpid())), bridge_ns_("ferry-br-" + tag_) {
  auto net = "10.214." + std::to_string(getpid() % 250) + ".";
  for (size_t i = 0; i < count; ++i) {
    namespaces_.push_back("ferry-h" + std::to_string(i + 1) + "-" + tag_);
    addresses_.push_back(net + std::to_string(i + 1));
  }
}

bridge_hosts::~bridge_hosts() {
  for (auto& ns : created_)
    static_cast<void>(ip({"netns", "del", ns}));
}

bool bridge_hosts::make_namespace(const std::string& ns) {
  if (!ip({"netns", "add", ns}))
    return false;
  created_.push_back(ns);
  return true;
}

std::string bridge_hosts::outer(size_t i) const {
  return veth_prefix() + "b" + std::to_string(i + 1);
}

std::string bridge_hosts::inner(size_t i) const {
  return veth_prefix() + "n" + std::to_string(i + 1);
}

std::string bridge_hosts::set_up() {
  if (!make_namespace(bridge_ns_))
    return "cannot create a network namespace here (needs CAP_SYS_ADMIN)";
  for (auto br : {"br0", "br1"})
    if (!ip({"-n", bridge_ns_, "link", "add", br, "type", "bridge"})
        || !ip({"-n", bridge_ns_, "link", "set", br, "up"}))
      return "cannot create a bridge in namespace " + bridge_ns_;
  for (size_t i = 0; i < namespaces_.size(); ++i) {
    auto inner = this->inner(i);
    auto& ns = namespaces_[i];
    if (!make_namespace(ns)
        || !ip({"link", "add", inner, "netns", ns, "type", "veth", "peer",
                "name", outer(i), "netns", bridge_ns_})
        || !ip({"-n", bridge_ns_, "link", "set", outer(i), "master", "br0",
                "up"})
        || !ip({"-n", ns, "addr", "add", addresses_[i] + "/24", "dev", inner})
        || !ip({"-n", ns, "link", "set", inner, "up"})
        || !ip({"-n", ns, "link", "set", "lo", "up"}))
      return "cannot connect namespace " + ns + " to the bridge";
  }
  return {};
}

bool bridge_hosts::cut(const std::vector<size_t>& side) {
  for (auto i : side)
    if (!ip({"-n", bridge_ns_, "link", "set", outer(i), "master", "br1"}))
      return false;
  return true;
}

bool bridge_hosts::heal() {
  for (size_t i = 0; i < namespaces_.size(); ++i)
    if (!ip({"-n", bridge_ns_, "link", "set", outer(i), "master", "br0"}))
      return false;
  return true;
}

} // namespace ferry::test
