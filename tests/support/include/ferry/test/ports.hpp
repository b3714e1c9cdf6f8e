// Ports of 127.0.0.1 for tests that must name a port before a node listens
// on it (a cluster's addresses and seeds).
//
// `port_block` binds `k` ports and holds them until `release`, so that no
// two of them are the same; after `release` another process may take one
// before the test's node does (rare: the kernel hands out ephemeral ports
// in turn). `free_port` is one port so held and released at once.
//
// Thread-safety: a port_block belongs to one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ferry::test {

class port_block {
public:
  /// Binds `k` ports of 127.0.0.1.
  explicit port_block(size_t k);

  port_block(const port_block&) = delete;
  port_block& operator=(const port_block&) = delete;

  ~port_block();

  /// Lets the ports go (nodes may listen on them now).
  void release();

  /// Returns the `i`-th port.
  uint16_t operator[](size_t i) const {
    return ports_[i];
  }

private:
  std::vector<int> fds_;
  std::vector<uint16_t> ports_;
};

/// Returns a port of 127.0.0.1 that was free a moment ago.
uint16_t free_port();

} // namespace ferry::test
