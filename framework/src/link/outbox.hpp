// outbox: sends a link's wire messages in order, batching small ones.
//
// Wire messages go out in the order of their sequence numbers (one lock
// around numbering and enqueueing), so the peer's `credit::delivered` count
// says which were taken; the store tickets and transfers of each message
// are recorded under the same lock (`ticket_ledger`, `transfer_table`), in
// that order too. Control messages go out after the messages posted before
// them.
//
// Batching: a small message (up to 16 KiB) posted within `batch_gap` of the
// previous one joins a batch instead of going out alone; the batch is sent
// as one `wire_batch` when it holds `batch_messages` messages or 256 KiB,
// or by the flusher actor (scheduled when the first message joined) once
// the burst pauses for `batch_gap` or the batch's first message has waited
// `max_batch_gaps` gaps (200 µs at most). Until then the flusher sends
// itself another turn: flushing at its first turn, which on a machine with
// a core to spare comes a few microseconds after the first message, sent
// batches of a third of the size and paid the wake-ups of each (the BASP
// broker's, the peer's actor's) three times as often. A message after a pause goes out at once,
// so request/response latency is unchanged.
//
// Sending: when the peer's gateway is CAF's proxy of a remote actor (always,
// between nodes), a message goes to CAF's BASP broker as the proxy would
// forward it, skipping the mailbox element the proxy would take it in
// (once CAF killed the proxy, the proxy gets it and drops it); the
// messages come from a `block_pool`
// (ferry/serializers/detail/pooled_message.hpp).
//
// Same-host lane: given the ring of a lane (lane/ring.hpp), every message
// goes into it instead, written with CAF's binary format as BASP would
// write it; the peer's lane reader hands it to its gateway. Data and control
// messages alike, so their order holds. A full ring makes the sender wait
// (under the lock, like any send) until the peer's reader makes room or
// either side closes the lane; a closed ring drops what comes after, as a
// closed connection does (the link is going down). A lane reader thread
// never waits for room (two readers each waiting on the other's ring would
// wait for good): what it sends finding the ring full is kept, in order, in
// a backlog that the next sender writes first and that the reader drains
// between the records it reads (`drain_lane_backlog`).
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the sequence, the batch and the enqueueing.
#pragma once

#include "lane/ring.hpp"
#include "link/link_counters.hpp"
#include "link/ticket_ledger.hpp"
#include "link/transfer_table.hpp"
#include "wire/message.hpp"

#include <caf/actor.hpp>
#include <caf/execution_unit.hpp>
#include <caf/message.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace ferry::detail {

class outbox {
public:
  /// Sends to `peer_gateway` as `own_gateway`, with the link's `token`.
  /// `spawn_flusher` makes the actor that calls `flush` for a pending batch
  /// (called once, when the first batch starts).
  outbox(caf::actor peer_gateway, caf::actor own_gateway, uint64_t token,
         uint32_t batch_messages, std::chrono::microseconds batch_gap,
         ticket_ledger& tickets, transfer_table& transfers,
         link_counters& counters, std::function<caf::actor()> spawn_flusher,
         std::shared_ptr<lane::ring> lane = nullptr);

  /// Returns whether messages go through a same-host lane.
  bool on_lane() const noexcept { return lane_ != nullptr; }

  /// Returns the flag that says a lane backlog waits (set and cleared under
  /// the lock; read by the lane reader without it).
  const std::shared_ptr<std::atomic<bool>>& lane_backlog_flag() const {
    return backlog_pending_;
  }

  /// Writes what the lane backlog holds as far as the ring has room,
  /// without waiting.
  void drain_lane_backlog();

  /// Sends `msg` (`size`: its wire_size) in link order, recording `tickets`
  /// and the transfers `transfer_ids` with its sequence number. Returns
  /// false, sending nothing, when the ticket ledger is closed (the link went
  /// down): then the caller cancels the tickets.
  [[nodiscard]] bool post(wire_message&& msg, uint64_t size,
                          const std::vector<store::transfer_ticket>& tickets,
                          const std::vector<uint64_t>& transfer_ids,
                          caf::execution_unit* host);

  /// Sends a control message after the messages posted before it.
  void send_control(caf::message msg, caf::execution_unit* host);

  /// A batch waits for more messages at most this many `batch_gap`s after
  /// its first one, and never longer than `max_batch_wait`.
  static constexpr int max_batch_gaps = 10;
  static constexpr std::chrono::microseconds max_batch_wait{200};

  /// Sends the batch held, if any (called by the flusher). Returns false,
  /// sending nothing, while a burst still fills the batch: the flusher
  /// calls again after the other work queued on its thread.
  [[nodiscard]] bool flush();

  /// Drops the batch, sends nothing more, and returns the flusher (null if
  /// none was spawned) for the caller to stop.
  caf::actor close();

private:
  using clock = std::chrono::steady_clock;

  /// `batch_started_` while no batch is held.
  static constexpr clock::rep no_batch = 0;

  /// Sends the held batch, if any (requires `mtx_`).
  void flush_locked(caf::execution_unit* host);

  /// Enqueues `msg` to the peer's gateway (requires `mtx_`).
  void enqueue_locked(caf::message msg, caf::execution_unit* host);

  /// Writes `msg` into the lane (requires `mtx_`).
  void write_lane_locked(const caf::message& msg);

  /// Writes the lane backlog, waiting for room when `wait` (requires
  /// `mtx_`).
  void drain_backlog_locked(bool wait);

  const caf::actor peer_gateway_;
  const caf::strong_actor_ptr peer_ctrl_;
  /// The BASP broker sending for `peer_gateway_` (null when that is not a
  /// proxy, and once closed).
  caf::actor basp_;
  const caf::strong_actor_ptr own_gateway_;
  const uint64_t token_;
  const uint32_t batch_messages_;
  const std::chrono::microseconds batch_gap_;
  const std::chrono::microseconds max_batch_wait_;
  ticket_ledger& tickets_;
  transfer_table& transfers_;
  link_counters& counters_;
  const std::function<caf::actor()> spawn_flusher_;
  /// The ring of the same-host lane, or null; closed without the lock.
  const std::shared_ptr<lane::ring> lane_;

  std::mutex mtx_;
  bool closed_ = false;
  uint64_t posted_ = 0;
  std::vector<wire_message> batch_;
  uint64_t batch_bytes_ = 0;
  bool flush_scheduled_ = false;
  /// When the last message was posted (steady_clock ticks; written under
  /// the lock, read by `flush` without it).
  std::atomic<clock::rep> last_post_{0};
  /// When the held batch's first message was posted (steady_clock ticks),
  /// or `no_batch`; written under the lock, read by `flush` without it.
  std::atomic<clock::rep> batch_started_{no_batch};
  caf::actor flusher_;
  /// A message's bytes on their way into the lane.
  std::vector<char> lane_buf_;
  /// Messages a lane reader thread found no room for, oldest first.
  std::deque<std::vector<char>> lane_backlog_;
  const std::shared_ptr<std::atomic<bool>> backlog_pending_
    = std::make_shared<std::atomic<bool>>(false);
};

} // namespace ferry::detail
