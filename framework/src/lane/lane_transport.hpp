// lane_transport: a link's way out through a same-host lane.
//
// Two nodes that share the host store send a link's frames through a ring
// in shared memory that the peer reads (lane/ring.hpp), one record per
// frame, the same frames a connection carries (wire/frame.hpp). The link's
// TCP connection stays open beside the lane: it carried the handshake, and
// it carries heartbeats, so a peer that dies or stops is noticed there.
//
// Writing: a frame goes into the ring as one record, its pieces copied
// straight from where they are. A frame that does not fit waits until the
// peer's reader makes room (like a blocking socket), except on a thread
// that may never wait (transport.hpp, `may_wait`): a reader of frames that
// waited for its peer's ring while the peer's reader waited for its own
// would wait for good. What such a thread sends finding the ring full is
// kept, in order, in a backlog that the next sender writes first and that
// the link's lane reader drains between the records it reads
// (`drain_backlog`). A closed or broken ring drops what comes after, as a
// closed connection does: the link is going down.
//
// Thread-safety: `send` is called under the link's outbox lock; `send`,
// `drain_backlog` and `close` may be called from any thread. One mutex
// guards the backlog and orders the ring's writers.
#pragma once

#include "lane/ring.hpp"
#include "transport/transport.hpp"

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace ferry::detail {

class lane_transport final : public transport {
public:
  /// Writes into `out`; `beside` is the link's connection, closed with the
  /// lane.
  lane_transport(std::shared_ptr<lane::ring> out,
                 std::shared_ptr<transport> beside);

  void send(wire::out_frame&& frame) override;

  void close(bool drain) override;

  bool is_lane() const noexcept override { return true; }

  /// Returns the flag that says a backlog waits (read by the lane reader
  /// without the lock).
  const std::shared_ptr<std::atomic<bool>>& backlog_flag() const {
    return backlog_pending_;
  }

  /// Writes what the backlog holds as far as the ring has room, without
  /// waiting.
  void drain_backlog();

private:
  /// Writes the backlog, waiting for room when `wait` (requires `mtx_`).
  void drain_locked(bool wait);

  const std::shared_ptr<lane::ring> out_;
  const std::shared_ptr<transport> beside_;
  std::mutex mtx_;
  std::vector<std::span<const std::byte>> pieces_;
  /// Frames a thread that may not wait found no room for, oldest first.
  std::deque<std::vector<std::byte>> backlog_;
  const std::shared_ptr<std::atomic<bool>> backlog_pending_
    = std::make_shared<std::atomic<bool>>(false);
};

} // namespace ferry::detail
