// outbox: ordered sending and batching (see link/outbox.hpp).
#include "link/outbox.hpp"

#include "ferry/serializers/detail/pooled_message.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/forwarding_actor_proxy.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/make_message.hpp>
#include <caf/send.hpp>

#include <algorithm>

#include "lane/readers.hpp"
#include "link/atoms.hpp"

namespace ferry::detail {

using serializers::detail::make_pooled_message;

namespace {

// Returns the time from `ticks` (a steady_clock reading) to `now`.
std::chrono::steady_clock::duration
since(std::chrono::steady_clock::rep ticks,
      std::chrono::steady_clock::time_point now) {
  return now.time_since_epoch() - std::chrono::steady_clock::duration{ticks};
}

// Room reserved for a batch's messages when it starts (more grow it).
constexpr size_t batch_reserve_limit = 256;

// Messages up to this size may join a batch; a batch holds at most this many
// bytes.
constexpr uint64_t batch_item_bytes = 16 * 1024;
constexpr uint64_t batch_bytes_limit = 256 * 1024;
// Receivers refuse larger batches (wire_batch::load); a batch is flushed once
// it reaches batch_bytes_limit, and wire_size counts every message as at
// least wire_overhead bytes.
static_assert(batch_bytes_limit / wire_overhead + 1 <= max_batch_messages);

/// Returns the BASP broker that sends for `peer` when `peer` is CAF's proxy
/// of a remote actor, else null. CAF has one BASP broker per actor system,
/// plain and TLS links alike.
caf::actor basp_broker_of(const caf::actor& peer) {
  auto* ptr = caf::actor_cast<caf::abstract_actor*>(peer);
  if (dynamic_cast<caf::forwarding_actor_proxy*>(ptr) == nullptr)
    return {};
  auto& sys = ptr->home_system();
  if (!sys.has_middleman())
    return {};
  return sys.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
}

} // namespace

outbox::outbox(caf::actor peer_gateway, caf::actor own_gateway, uint64_t token,
               uint32_t batch_messages, std::chrono::microseconds batch_gap,
               ticket_ledger& tickets, transfer_table& transfers,
               link_counters& counters,
               std::function<caf::actor()> spawn_flusher,
               std::shared_ptr<lane::ring> lane)
    : peer_gateway_(std::move(peer_gateway)),
      peer_ctrl_(caf::actor_cast<caf::strong_actor_ptr>(peer_gateway_)),
      basp_(basp_broker_of(peer_gateway_)),
      own_gateway_(caf::actor_cast<caf::strong_actor_ptr>(own_gateway)),
      token_(token), batch_messages_(batch_messages), batch_gap_(batch_gap),
      max_batch_wait_(std::min(batch_gap * max_batch_gaps, max_batch_wait)),
      tickets_(tickets), transfers_(transfers), counters_(counters),
      spawn_flusher_(std::move(spawn_flusher)), lane_(std::move(lane)) {
  // nop
}

bool outbox::post(wire_message&& msg, uint64_t size,
                  const std::vector<store::transfer_ticket>& tickets,
                  const std::vector<uint64_t>& transfer_ids,
                  caf::execution_unit* host) {
  std::lock_guard<std::mutex> guard{mtx_};
  msg.token = token_;
  auto seq = posted_++;
  transfers_.record(seq, transfer_ids);
  // Kept until the peer's credit says it took the message; cancelled when
  // the link dies before that.
  if (!tickets.empty() && !tickets_.record(seq, tickets, msg))
    return false;
  // A small message close behind the previous one joins the batch; the
  // flusher (or a full batch) sends it. Anything else goes out at once,
  // after the batch.
  auto now = clock::now();
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
      flush_locked(host);
    } else if (!flush_scheduled_ && !closed_) {
      flush_scheduled_ = true;
      if (!flusher_)
        flusher_ = spawn_flusher_();
      caf::anon_send(flusher_, flush_atom::value);
    }
    return true;
  }
  flush_locked(host);
  counters_.batch_messages.observe(1);
  enqueue_locked(make_pooled_message(std::move(msg)), host);
  return true;
}

void outbox::send_control(caf::message msg, caf::execution_unit* host) {
  std::lock_guard<std::mutex> guard{mtx_};
  flush_locked(host);
  enqueue_locked(std::move(msg), host);
}

bool outbox::flush() {
  // While the burst goes on, the batch waits for more (up to its size
  // limit, or `max_batch_wait` since its first message): the flusher asks
  // again. Read without the lock, which the sender takes for every message.
  auto now = clock::now();
  auto started = batch_started_.load(std::memory_order_relaxed);
  auto last = last_post_.load(std::memory_order_relaxed);
  if (started != no_batch && since(last, now) < batch_gap_
      && since(started, now) < max_batch_wait_)
    return false;
  std::lock_guard<std::mutex> guard{mtx_};
  flush_scheduled_ = false;
  flush_locked(nullptr);
  return true;
}

void outbox::flush_locked(caf::execution_unit* host) {
  if (batch_.empty())
    return;
  counters_.batch_messages.observe(batch_.size());
  if (batch_.size() == 1) {
    enqueue_locked(make_pooled_message(std::move(batch_.front())), host);
  } else {
    ++counters_.batches_sent;
    counters_.messages_batched += batch_.size();
    wire_batch batch;
    batch.messages.swap(batch_);
    enqueue_locked(make_pooled_message(std::move(batch)), host);
  }
  batch_.clear();
  batch_bytes_ = 0;
  batch_started_.store(no_batch, std::memory_order_relaxed);
}

void outbox::enqueue_locked(caf::message msg, caf::execution_unit* host) {
  if (closed_)
    return;
  if (lane_) {
    write_lane_locked(msg);
    return;
  }
  // What CAF's proxy does with a message it takes (forward_msg), without
  // the mailbox element the proxy would take it in. A proxy CAF killed (its
  // connection closed) drops what it takes instead: a message for it goes
  // to the proxy, so it is not routed to the peer node over another
  // connection (connects that cross close one of two).
  if (basp_ &&
      !peer_ctrl_->get()->getf(caf::abstract_actor::is_terminated_flag)) {
    basp_->enqueue(nullptr, caf::make_message_id(),
                   make_pooled_message(
                     static_cast<caf::atom_value>(caf::forward_atom::value),
                     own_gateway_, std::vector<caf::strong_actor_ptr>{},
                     peer_ctrl_, caf::make_message_id(), std::move(msg)),
                   nullptr);
    return;
  }
  peer_gateway_->enqueue(caf::make_mailbox_element(own_gateway_,
                                                   caf::make_message_id(), {},
                                                   std::move(msg)),
                         host);
}

namespace {

/// Writes `bytes` as one record into `lane`, waiting for room when `wait`.
lane::ring::status put_record(lane::ring& lane, const std::vector<char>& bytes,
                              bool wait) {
  std::span<const std::byte> piece{
    reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()};
  return wait ? lane.write({&piece, 1}) : lane.try_write({&piece, 1});
}

} // namespace

void outbox::write_lane_locked(const caf::message& msg) {
  lane_buf_.clear();
  caf::binary_serializer sink{own_gateway_->get()->home_system(), lane_buf_};
  if (auto err = sink(const_cast<caf::message&>(msg))) {
    // Only a type missing from the actor system's list fails here, which
    // BASP would drop the same way.
    ++counters_.send_errors;
    return;
  }
  // A lane reader thread never waits for room (see outbox.hpp).
  auto wait = !lane::on_reader_thread();
  if (!lane_backlog_.empty())
    drain_backlog_locked(wait);
  auto st = lane_backlog_.empty() ? put_record(*lane_, lane_buf_, wait)
                                  : lane::ring::status::full;
  if (st == lane::ring::status::full) {
    lane_backlog_.push_back(lane_buf_);
    backlog_pending_->store(true);
  } else if (st != lane::ring::status::done) {
    // Closed or broken: the link is going down (the peer closed its side,
    // or the reader thread reports the break), and what is unsent is
    // dropped as a lost connection drops it.
    ++counters_.send_errors;
  }
}

void outbox::drain_backlog_locked(bool wait) {
  while (!lane_backlog_.empty()) {
    auto st = put_record(*lane_, lane_backlog_.front(), wait);
    if (st == lane::ring::status::full)
      break;
    if (st == lane::ring::status::done) {
      lane_backlog_.pop_front();
    } else {
      counters_.send_errors += lane_backlog_.size();
      lane_backlog_.clear();
    }
  }
  backlog_pending_->store(!lane_backlog_.empty());
}

void outbox::drain_lane_backlog() {
  std::lock_guard<std::mutex> guard{mtx_};
  if (lane_ && !closed_)
    drain_backlog_locked(false);
}

caf::actor outbox::close() {
  std::vector<wire_message> dropped; // released after the lock
  caf::actor flusher;
  caf::actor basp;
  // First, so a sender waiting for room in the ring (holding the lock)
  // wakes.
  if (lane_)
    lane_->close();
  std::lock_guard<std::mutex> guard{mtx_};
  closed_ = true;
  dropped.swap(batch_);
  batch_bytes_ = 0;
  batch_started_.store(no_batch, std::memory_order_relaxed);
  flusher.swap(flusher_);
  basp.swap(basp_);
  return flusher;
}

} // namespace ferry::detail
