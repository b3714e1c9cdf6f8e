// Connecting a plain CAF baseline to its peer, for benchmarks that run CAF
// beside ferry.
//
// `connect_caf` is CAF's `remote_actor`, made again while CAF closes the new
// connection at a heartbeat tick before the peer has answered CAF's
// handshake: CAF 0.17 has no time of last contact for a connection it
// opened until the peer's first bytes arrive, so a tick in between takes it
// for silent (`connection_timeout`). The tuned baseline runs with ferry's
// heartbeats, and ferry's own connect does the same (docs/limits.md), so
// neither side of a comparison fails a row for it. Stateless.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/expected.hpp>
#include <caf/io/middleman.hpp>
#include <caf/sec.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

namespace ferry::bench {

/// Returns CAF's proxy of the actor published at `host`:`port`, connecting
/// again 10 ms after a `connection_timeout`, for up to 30 s.
inline caf::expected<caf::actor>
connect_caf(caf::actor_system& sys, const std::string& host, uint16_t port) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{30};
  for (int attempt = 1;; ++attempt) {
    auto result = sys.middleman().remote_actor(host, port);
    if (result || result.error() != caf::sec::connection_timeout)
      return result;
    if (std::chrono::steady_clock::now() >= deadline)
      return caf::make_error(
        caf::sec::connection_timeout,
        host + ":" + std::to_string(port) + " accepted "
          + std::to_string(attempt)
          + " connections in 30 s but answered CAF's handshake on none "
            "before this node's next heartbeat tick");
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
}

} // namespace ferry::bench
