// lane_transport: a link's way out through a same-host lane.
//
// Two nodes that share the host store send a link's frames through a ring
// in shared memory that the peer reads (lane/ring.hpp), one record per
// frame, the same frames a connection carries (wire/frame.hpp). The link's
// TCP connection stays open beside the lane: it carried the handshake, and
// it carries heartbeats, so a peer that dies or stops is noticed there.
//
// Writing: a frame goes into the ring as one record, its pieces copied
// straight from where they are, when the ring has room for it now. What
// finds no room (the whole frame, or the rest of one longer than the room)
// is copied, in order, into a backlog, and every later frame goes behind
// it. No thread waits for the ring while holding a lock: a thread that may
// wait (transport.hpp, `may_wait`) waits in `await_room`, before and after
// its link's outbox takes its lock, writing the backlog as room appears,
// like a blocking socket; a thread that reads frames never waits, and the
// link's lane reader writes the backlog between the records it reads
// (`drain_backlog`). So a reader that sends (an answer, a refusal, a
// message for a proxy of another link) never stands behind a sender that
// waits for the peer's reader, which may in turn be sending to it. A closed
// or broken ring drops what comes after, as a closed connection does: the
// link is going down.
//
// Thread-safety: `send` is called under the link's outbox lock; `send`,
// `await_room`, `drain_backlog` and `close` may be called from any thread.
// One mutex guards the backlog and orders the ring's writers; it is never
// held while waiting.
#pragma once

#include "lane/ring.hpp"
#include "thread_safety.hpp"
#include "transport/transport.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

namespace ferry::detail {

class lane_transport final : public transport {
public:
  /// How long an orderly close writes what the backlog still holds.
  static constexpr std::chrono::seconds linger{2};

  /// Writes into `out`; `beside` is the link's connection, closed with the
  /// lane.
  lane_transport(std::shared_ptr<lane::ring> out,
                 std::shared_ptr<transport> beside);

  void send(wire::out_frame&& frame) override;

  void await_room(uint64_t bytes) override;

  void close(bool drain) override;

  void fail(caf::error why) override;

  bool is_lane() const noexcept override { return true; }
  bool is_tls() const noexcept override { return beside_->is_tls(); }

  /// Returns the flag that says a backlog waits (read by the lane reader
  /// without the lock).
  const std::shared_ptr<std::atomic<bool>>& backlog_flag() const {
    return backlog_pending_;
  }

  /// Writes what the backlog holds as far as the ring has room, without
  /// waiting.
  void drain_backlog();

private:
  /// Bytes of the ring's stream not written yet, and how many of them went.
  struct pending {
    std::vector<std::byte> bytes;
    size_t done = 0;
  };

  /// Writes the backlog as far as the ring has room; returns whether it
  /// is empty.
  bool pump_locked() FERRY_REQUIRES(mtx_);

  /// Keeps `frame` whole, behind what the backlog holds.
  void keep_locked(const wire::out_frame& frame) FERRY_REQUIRES(mtx_);

  /// Writes `parts` as far as the ring has room and keeps the rest
  /// (requires an empty backlog).
  void stream_locked(std::span<const std::span<const std::byte>> parts)
    FERRY_REQUIRES(mtx_);

  /// The ring closed (or broke: `st` is `corrupt`, and the link goes down
  /// naming the ring): what is kept and what comes is dropped.
  void broken_locked(lane::ring::status st = lane::ring::status::closed)
    FERRY_REQUIRES(mtx_);

  const std::shared_ptr<lane::ring> out_;
  const std::shared_ptr<transport> beside_;
  mutex mtx_;
  bool broken_ FERRY_GUARDED_BY(mtx_) = false;
  std::vector<std::span<const std::byte>> pieces_ FERRY_GUARDED_BY(mtx_);
  std::deque<pending> backlog_ FERRY_GUARDED_BY(mtx_);
  const std::shared_ptr<std::atomic<bool>> backlog_pending_ =
    std::make_shared<std::atomic<bool>>(false);
};

} // namespace ferry::detail
