// outbox: ordered sending and batching (see link/outbox.hpp).
#include "link/outbox.hpp"

#include "link/atoms.hpp"
#include "thread_role.hpp"

#include <caf/send.hpp>

#include <algorithm>

namespace ferry::detail {

namespace {

// Returns the time from `ticks` (a clock reading) to `now`.
clock::duration since(clock::duration::rep ticks, clock::time_point now) {
  return now.time_since_epoch() - clock::duration{ticks};
}

// Room reserved for a batch's messages when it starts (more grow it).
constexpr size_t batch_reserve_limit = 256;

// Messages up to this size may join a batch; a batch holds at most this many
// bytes.
constexpr uint64_t batch_item_bytes = 16 * 1024;
constexpr uint64_t batch_bytes_limit = 256 * 1024;
// Receivers refuse larger batches (read_batch); a batch is flushed once it
// reaches batch_bytes_limit, and wire_size counts every message as at least
// wire_overhead bytes.
static_assert(batch_bytes_limit / wire_overhead + 1 <= max_batch_messages);

} // namespace

outbox::outbox(std::shared_ptr<transport> out, uint32_t batch_messages,
               std::chrono::microseconds batch_gap, ticket_ledger& tickets,
               transfer_table& transfers, link_counters& counters,
               std::function<caf::actor()> spawn_flusher, const clock& time)
  : out_(std::move(out)),
    batch_messages_(batch_messages),
    batch_gap_(batch_gap),
    max_batch_wait_(std::min(batch_gap * max_batch_gaps, max_batch_wait)),
    tickets_(tickets),
    transfers_(transfers),
    counters_(counters),
    spawn_flusher_(std::move(spawn_flusher)),
    time_(time) {
  // nop
}

bool outbox::post(wire_message&& msg, uint64_t size,
                  const std::vector<store::transfer_ticket>& tickets,
                  const std::vector<uint64_t>& transfer_ids) {
  // Room for the message and a batch it may complete, waited for before
  // the lock; what went to the transport's backlog, after it.
  auto wait = thread_role::may_wait_for_room();
  if (wait)
    out_->await_room(size + batch_bytes_limit);
  auto posted = post_now(std::move(msg), size, tickets, transfer_ids);
  if (wait)
    out_->await_room(0);
  return posted;
}

bool outbox::post_now(wire_message&& msg, uint64_t size,
                      const std::vector<store::transfer_ticket>& tickets,
                      const std::vector<uint64_t>& transfer_ids) {
  lock_guard guard{mtx_};
  auto seq = posted_++;
  transfers_.record(seq, transfer_ids);
  // Kept until the peer's credit says it took the message; cancelled when
  // the link dies before that.
  if (!tickets.empty() && !tickets_.record(seq, tickets, msg))
    return false;
  // A small message close behind the previous one joins the batch; the
  // flusher (or a full batch) sends it. Anything else goes out at once,
  // after the batch.
  auto now = time_.now();
  auto last = last_post_.load(std::memory_order_relaxed);
  auto burst = since(last, now) < batch_gap_;
  last_post_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
  if (burst && batch_messages_ > 1 && size <= batch_item_bytes) {
    batch_bytes_ += size;
    if (batch_.empty()) {
      batch_started_.store(now.time_since_epoch().count(),
                           std::memory_order_relaxed);
      // The last batch took the vector's memory along.
      batch_.reserve(std::min<size_t>(batch_messages_, batch_reserve_limit));
    }
    batch_.emplace_back(std::move(msg));
    if (batch_.size() >= batch_messages_ || batch_bytes_ >= batch_bytes_limit) {
      flush_locked();
    } else if (!flush_scheduled_ && !closed_) {
      flush_scheduled_ = true;
      if (!flusher_)
        flusher_ = spawn_flusher_();
      caf::anon_send(flusher_, flush_atom::value);
    }
    return true;
  }
  flush_locked();
  counters_.batch_messages.observe(1);
  send_locked(message_frame(msg));
  return true;
}

void outbox::send_frame(wire::out_frame&& frame) {
  auto wait = thread_role::may_wait_for_room();
  if (wait)
    out_->await_room(frame.size() + batch_bytes_limit);
  {
    lock_guard guard{mtx_};
    flush_locked();
    send_locked(std::move(frame));
  }
  if (wait)
    out_->await_room(0);
}

clock::duration outbox::flush() {
  // While the burst goes on, the batch waits for more (up to its size
  // limit, or `max_batch_wait` since its first message): the flusher asks
  // again. Read without the lock, which the sender takes for every message.
  auto now = time_.now();
  auto started = batch_started_.load(std::memory_order_relaxed);
  auto last = last_post_.load(std::memory_order_relaxed);
  if (started != no_batch && since(last, now) < batch_gap_ &&
      since(started, now) < max_batch_wait_)
    return std::max(
      clock::duration{1},
      std::min<clock::duration>(batch_gap_ - since(last, now),
                                max_batch_wait_ - since(started, now)));
  auto wait = thread_role::may_wait_for_room();
  if (wait)
    out_->await_room(batch_bytes_limit);
  {
    lock_guard guard{mtx_};
    flush_scheduled_ = false;
    flush_locked();
  }
  if (wait)
    out_->await_room(0);
  return clock::duration::zero();
}

void outbox::flush_locked() {
  if (batch_.empty())
    return;
  counters_.batch_messages.observe(batch_.size());
  if (batch_.size() == 1) {
    send_locked(message_frame(batch_.front()));
  } else {
    ++counters_.batches_sent;
    counters_.messages_batched += batch_.size();
    send_locked(batch_frame(batch_));
  }
  batch_.clear();
  batch_bytes_ = 0;
  batch_started_.store(no_batch, std::memory_order_relaxed);
}

void outbox::send_locked(wire::out_frame&& frame) {
  if (closed_)
    return;
  out_->send(std::move(frame));
}

caf::actor outbox::close(std::optional<wire::out_frame> last) {
  std::vector<wire_message> dropped; // released after the lock
  caf::actor flusher;
  lock_guard guard{mtx_};
  if (last && !closed_) {
    flush_locked();
    send_locked(std::move(*last));
  }
  closed_ = true;
  dropped.swap(batch_);
  batch_bytes_ = 0;
  batch_started_.store(no_batch, std::memory_order_relaxed);
  flusher.swap(flusher_);
  return flusher;
}

} // namespace ferry::detail
