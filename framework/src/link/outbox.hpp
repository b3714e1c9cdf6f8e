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
// as one `batch` frame when it holds `batch_messages` messages or 256 KiB,
// or by the flusher actor (scheduled when the first message joined) once
// the burst pauses for `batch_gap` or the batch's first message has waited
// `max_batch_gaps` gaps (200 µs at most). Until then the flusher sends
// itself another turn, so a batch grows for as long as its burst lasts and
// each wake-up of the peer carries as many messages as it can. A message
// after a pause goes out at once, so request/response latency is
// unchanged.
//
// Sending: every frame goes to the link's transport (transport/transport.hpp)
// under the lock, so the transport sees the link's order: a TCP connection
// of ferry's own, or a same-host lane. The transport never waits there; a
// thread that may wait (`may_wait`) waits for the transport's room
// (`transport::await_room`) before it takes the lock and after it let go,
// so a full lane slows its senders without blocking a reader of frames
// that sends on the same link.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the sequence, the batch and the sending (the transport's own
// lock, if any, is taken inside it).
#pragma once

#include "clock.hpp"
#include "link/link_counters.hpp"
#include "link/ticket_ledger.hpp"
#include "thread_safety.hpp"
#include "transfer/transfer_table.hpp"
#include "transport/transport.hpp"
#include "wire/message.hpp"
#include "wire/out_frame.hpp"

#include <caf/actor.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace ferry::detail {

class outbox {
public:
  /// Sends through `out`. `spawn_flusher` makes the actor that calls
  /// `flush` for a pending batch (called once, when the first batch starts).
  outbox(std::shared_ptr<transport> out, uint32_t batch_messages,
         std::chrono::microseconds batch_gap, ticket_ledger& tickets,
         transfer_table& transfers, link_counters& counters,
         std::function<caf::actor()> spawn_flusher, const clock& time);

  /// Returns whether messages go through a same-host lane.
  bool on_lane() const noexcept { return out_->is_lane(); }
  bool on_tls() const noexcept { return out_->is_tls(); }

  /// Sends `msg` (`size`: its wire_size) in link order, recording `tickets`
  /// and the transfers `transfer_ids` with its sequence number. Returns
  /// false, sending nothing, when the ticket ledger is closed (the link went
  /// down): then the caller cancels the tickets.
  [[nodiscard]] bool post(wire_message&& msg, uint64_t size,
                          const std::vector<store::transfer_ticket>& tickets,
                          const std::vector<uint64_t>& transfer_ids)
    FERRY_EXCLUDES(mtx_);

  /// Sends a frame (control, request or answer) after the messages posted
  /// before it.
  void send_frame(wire::out_frame&& frame) FERRY_EXCLUDES(mtx_);

  /// A batch waits for more messages at most this many `batch_gap`s after
  /// its first one, and never longer than `max_batch_wait`.
  static constexpr int max_batch_gaps = 10;
  static constexpr std::chrono::microseconds max_batch_wait{200};

  /// Sends the batch held, if any (called by the flusher). Returns how long
  /// the batch may still wait (on the outbox's clock), sending nothing,
  /// while a burst still fills it; zero once it sent it: the flusher
  /// calls again after the other work queued on its thread.
  [[nodiscard]] clock::duration flush() FERRY_EXCLUDES(mtx_);

  /// Sends nothing more and returns the flusher (null if none was spawned)
  /// for the caller to stop. With `last`, the held batch and then `last`
  /// go out first (an orderly end); without, the batch is dropped.
  caf::actor close(std::optional<wire::out_frame> last = std::nullopt);

private:
  /// `batch_started_` while no batch is held.
  static constexpr clock::duration::rep no_batch = 0;

  /// `post` under the lock.
  bool post_now(wire_message&& msg, uint64_t size,
                const std::vector<store::transfer_ticket>& tickets,
                const std::vector<uint64_t>& transfer_ids);

  /// Sends the held batch, if any.
  void flush_locked() FERRY_REQUIRES(mtx_);

  /// Hands `frame` to the transport.
  void send_locked(wire::out_frame&& frame) FERRY_REQUIRES(mtx_);

  const std::shared_ptr<transport> out_;
  const uint32_t batch_messages_;
  const std::chrono::microseconds batch_gap_;
  const std::chrono::microseconds max_batch_wait_;
  ticket_ledger& tickets_;
  transfer_table& transfers_;
  link_counters& counters_;
  const std::function<caf::actor()> spawn_flusher_;
  const clock& time_;

  mutex mtx_;
  bool closed_ FERRY_GUARDED_BY(mtx_) = false;
  uint64_t posted_ FERRY_GUARDED_BY(mtx_) = 0;
  std::vector<wire_message> batch_ FERRY_GUARDED_BY(mtx_);
  uint64_t batch_bytes_ FERRY_GUARDED_BY(mtx_) = 0;
  bool flush_scheduled_ FERRY_GUARDED_BY(mtx_) = false;
  /// When the last message was posted (`time_`'s ticks; written under
  /// the lock, read by `flush` without it).
  std::atomic<clock::duration::rep> last_post_{0};
  /// When the held batch's first message was posted (`time_`'s ticks),
  /// or `no_batch`; written under the lock, read by `flush` without it.
  std::atomic<clock::duration::rep> batch_started_{no_batch};
  caf::actor flusher_ FERRY_GUARDED_BY(mtx_);
};

} // namespace ferry::detail
