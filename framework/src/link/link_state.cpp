// link_state: sending, receiving and going down, across the link's parts
// (see link/link_state.hpp).
#include "link/link_state.hpp"

#include "thread_role.hpp"

#include "link/atoms.hpp"
#include "link/delivery_batch.hpp"
#include "link/puller.hpp"
#include "link/remote_proxy.hpp"

#include "ferry/errc.hpp"

#include "ferry/serializers/detail/error.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/make_actor.hpp>
#include <caf/send.hpp>

#include <algorithm>

namespace ferry::detail {

namespace {

/// Whether this thread is inside link_state::deliver (see send).

/// Sends a link's batch when its outbox asks and the batch is ready (see
/// link/outbox.hpp).
caf::behavior flusher(caf::event_based_actor* self,
                      std::weak_ptr<link_state> link) {
  return {
    [self, link](flush_atom) {
      auto l = link.lock();
      if (!l)
        return;
      // The burst goes on: ask again after the other work queued here, or,
      // on a clock that does not move by itself (a test's manual clock),
      // after a real pause.
      auto left = l->flush();
      if (left <= clock::duration::zero())
        return;
      auto& time = l->time();
      if (time.moves())
        self->send(self, flush_atom::value);
      else
        self->delayed_send(self, std::chrono::milliseconds{1},
                           flush_atom::value);
    },
  };
}

/// Counts a message as taken when it leaves scope (its tickets are redeemed
/// or cancelled by then).
struct taken_mark {
  credit_return& returns;
  ~taken_mark() { returns.taken(); }
};

/// Credit goes back in batches of a quarter of the smaller window.
uint64_t quarter(uint64_t mine, uint64_t theirs) {
  return std::max<uint64_t>(1, std::min(mine, theirs) / 4);
}

} // namespace

// -- construction -------------------------------------------------------------

link_state::link_state(link_host& host, const peer_info& peer, link_config cfg,
                       std::vector<std::string> send_families, bool same_host,
                       std::shared_ptr<transport> out)
  : alive_(host.live_links()),
    host_(host),
    peer_name_(peer.who.node_name),
    peer_id_(peer.who.node_id),
    cfg_(std::move(cfg)),
    default_actor_(peer.offer.default_actor),
    sent_by_family_(send_families),
    received_by_family_(cfg_.deserializers),
    types_(host.registry(), peer.offer, peer_name_, host.node_name()),
    ctx_{host.registry(),
         host.store(),
         cfg_,
         host.node_name(),
         peer_name_,
         same_host,
         peer.who.store_token,
         counters_,
         types_,
         host},
    transfers_(cfg_.chunk_size, ctx_.node_name, peer_name_),
    encoder_(ctx_, std::move(send_families), transfers_, sent_by_family_),
    decoder_(ctx_, received_by_family_),
    out_(std::move(out)),
    outbox_(
      out_, cfg_.batch_messages, cfg_.batch_gap, tickets_, transfers_,
      counters_,
      [this] { return host_.system().spawn(flusher, weak_from_this()); },
      host.time()),
    window_(
      cfg_.window_bytes, cfg_.window_messages, cfg_.send_timeout,
      [this] { send_control(credit_probe{}); }, counters_, peer_name_,
      host.time()),
    returns_(quarter(cfg_.window_bytes, peer.offer.window_bytes),
             quarter(cfg_.window_messages, peer.offer.window_messages)),
    held_(cfg_.max_held_bytes, cfg_.max_held_messages),
    requests_(cfg_.max_pending_requests),
    actors_(cfg_.max_proxies, cfg_.max_spawned_actors,
            [this](uint64_t id) { return make_proxy(id); }),
    inbox_([this] {
      return spawn_puller(host_.system(), weak_from_this(), host_.relays());
    }),
    logged_{log_limiter{std::chrono::seconds{1}, host.time()},
            log_limiter{std::chrono::seconds{1}, host.time()},
            log_limiter{std::chrono::seconds{1}, host.time()},
            log_limiter{std::chrono::seconds{1}, host.time()}} {
  for (auto& line : types_.report(encoder_.send_families()))
    host_.log(line);
  if (peer.offer.window_bytes > cfg_.max_held_bytes ||
      peer.offer.window_messages > cfg_.max_held_messages)
    host_.log("node " + peer_name_ + " sends with a credit window of " +
              std::to_string(peer.offer.window_messages) + " messages and " +
              std::to_string(peer.offer.window_bytes) +
              " bytes, above what this node holds of a peer's (" +
              std::to_string(cfg_.max_held_messages) + " messages, " +
              std::to_string(cfg_.max_held_bytes) +
              " bytes): when this node's actors fall behind, its messages "
              "beyond that are refused (receiver_full); raise "
              "ferry.link.max-held-messages / max-held-bytes here or "
              "lower window-messages / window-bytes there");
}

link_state::~link_state() = default;

void link_state::log_limited(log_topic topic, const std::string& line) {
  if (auto out = logged_[static_cast<size_t>(topic)].pass(line))
    host_.log(*out);
}

// -- sending ------------------------------------------------------------------

caf::error link_state::encode_message(
  uint64_t target, const caf::strong_actor_ptr& sender, caf::message_id mid,
  const caf::message& msg, std::vector<store::transfer_ticket>& tickets,
  std::vector<uint64_t>& transfers, inline_one<std::string>& families,
  wire_message& out) {
  auto sender_id = sender ? export_actor(sender) : uint64_t{0};
  serializers::handle_scope handles{handles_};
  return encoder_.encode_message(target, sender_id, mid, msg, tickets,
                                 transfers, families, out);
}

void link_state::release_unsent(
  const std::vector<store::transfer_ticket>& tickets,
  const std::vector<uint64_t>& transfers) {
  if (auto* store = host_.store())
    for (auto& ticket : tickets)
      static_cast<void>(store->cancel(ticket));
  for (auto id : transfers)
    transfers_.finish(id);
}

caf::error link_state::send(uint64_t target,
                            const caf::strong_actor_ptr& sender,
                            caf::message_id mid, caf::message msg,
                            caf::execution_unit*) {
  if (down_)
    return caf::make_error(errc::link_down,
                           "the link to node " + peer_name_ + " is down");
  std::vector<store::transfer_ticket> tickets;
  std::vector<uint64_t> transfers;
  inline_one<std::string> families;
  auto fail = [&](caf::error err) {
    release_unsent(tickets, transfers);
    ++counters_.send_errors;
    return err;
  };
  wire_message out;
  if (auto err = encode_message(target, sender, mid, msg, tickets, transfers,
                                families, out))
    return fail(std::move(err));
  auto size = wire_size(out);
  // Responses never wait, and neither does a delivering thread
  // (thread_role.hpp).
  if (auto err = window_.acquire(size, !mid.is_response() &&
                                         thread_role::may_wait_for_credit()))
    return fail(std::move(err));
  ++counters_.messages_sent;
  for (auto& family : families)
    sent_by_family_.count(family);
  // Once the link is down, the table takes no request: shut_down answers
  // every one it holds with link_down, and this one gets it here.
  if (mid.is_request() && sender) {
    auto added = requests_.add(sender, mid);
    if (!added.recorded)
      return fail(caf::make_error(
        errc::link_down, "the link to node " + peer_name_ + " went down"));
    if (added.evicted)
      fail_evicted(*added.evicted);
  }
  if (!outbox_.post(std::move(out), size, tickets, transfers)) {
    // The link went down meanwhile: nobody would cancel these, and the
    // message goes nowhere (a request hears of it from shut_down).
    release_unsent(tickets, {});
  }
  return caf::none;
}

void link_state::on_credit(const credit& x) {
  ++counters_.credits_received;
  window_.release(x.bytes, x.messages);
  // The peer redeemed or cancelled the frame tickets of the messages it
  // took; what is left of a handle's ticket inside a message it refused
  // before decoding goes now.
  release_unsent(tickets_.taken(x.delivered), {});
  transfers_.taken(x.delivered);
}

void link_state::on_probe() {
  if (auto batch = returns_.probed())
    send_control(*batch);
}

void link_state::return_credit(uint64_t bytes, bool held) {
  if (held)
    held_.release(bytes);
  if (auto batch = returns_.processed(bytes))
    send_control(*batch);
}

// -- receiving ----------------------------------------------------------------

caf::error link_state::hold(const wire_message& msg, uint64_t wire_size) {
  if (!held_.fits(wire_size) &&
      !requests_.claim_held_answer(msg.target, caf::message_id{msg.mid})) {
    auto& me = ctx_.node_name;
    return caf::make_error(
      errc::receiver_full,
      "node " + me + " holds " + std::to_string(held_.messages()) +
        " messages (" + std::to_string(held_.bytes()) + " bytes) from node " +
        peer_name_ + " that its actors have not processed yet; its limits " +
        "are " + std::to_string(held_.max_messages()) + " messages and " +
        std::to_string(held_.max_bytes()) +
        " bytes (max-held-messages, max-held-bytes); this message (" +
        std::to_string(wire_size) + " bytes, to actor " +
        std::to_string(msg.target) + ") is refused: node " + peer_name_ +
        " sends beyond its credit window, or its window-messages or "
        "window-bytes exceed these limits; lower them on node " +
        peer_name_ + " or raise ferry.link.max-held-messages / " +
        "max-held-bytes on node " + me);
  }
  held_.hold(wire_size);
  return caf::none;
}

void link_state::receive(wire_message& msg, uint64_t wire_size,
                         caf::execution_unit* host) {
  if (auto err = hold(msg, wire_size)) {
    // Its credit goes back all the same: a well-behaved sender whose window
    // exceeds this node's limits keeps its window.
    refuse_taken(msg, wire_size, std::move(err), host, false);
    return;
  }
  caf::actor wake;
  switch (inbox_.push(msg, wire_size, wake)) {
  case pull_queue::outcome::deliver_now:
    deliver(msg, wire_size, host);
    break;
  case pull_queue::outcome::queued:
    break;
  case pull_queue::outcome::queued_wake:
    // The puller delivers on its own thread: what came before goes first.
    delivery_batch::flush();
    caf::anon_send(wake, pull_atom::value);
    break;
  }
}

void link_state::refuse(wire_message& msg, caf::error reason,
                        credit_token& token, caf::execution_unit*) {
  counters_.count_refusal(reason);
  caf::message_id mid{msg.mid};
  // Cancel tickets of store frames not redeemed yet (a peer sharing the
  // store only: another host's could cancel tickets it guessed), release
  // pulled frames.
  auto* store = host_.store();
  for (auto& element : msg.elements)
    for (auto& frame : element.frames) {
      auto kind = static_cast<frame_kind>(frame.kind);
      if (kind == frame_kind::store_object && store != nullptr &&
          ctx_.same_host) {
        store::transfer_ticket ticket;
        ticket.object = store::object_id{frame.object_id};
        ticket.id = frame.ticket;
        static_cast<void>(store->cancel(ticket));
      } else if (is_pulled(kind)) {
        send_control(transfer_done{frame.ticket});
      }
    }
  token.release();
  if (mid.is_request()) {
    wire_message answer;
    answer.target = msg.sender;
    answer.sender = msg.target;
    answer.mid = mid.response_id().integer_value();
    answer.error = reason;
    auto size = wire_size(answer);
    // An answer holds no tickets: a closed ledger leaves nothing to cancel.
    if (window_.acquire(size, false) == caf::none)
      static_cast<void>(outbox_.post(std::move(answer), size, {}, {}));
  } else {
    log_limited(log_topic::refused, "refused a message from node " +
                                      peer_name_ + ": " + render(reason));
    send_control(refusal{msg.target, reason});
  }
}

void link_state::refuse_taken(wire_message& msg, uint64_t wire_size,
                              caf::error reason, caf::execution_unit* host,
                              bool held) {
  auto token = take(wire_size, held);
  taken_mark mark{returns_};
  refuse(msg, std::move(reason), token, host);
}

void link_state::deliver(wire_message& msg, uint64_t wire_size,
                         caf::execution_unit* host) {
  thread_role::delivering scope;
  ++counters_.messages_received;
  auto token = take(wire_size);
  taken_mark mark{returns_};
  caf::message_id mid{msg.mid};
  // A response answers a request of this node's that went to this peer,
  // once; it takes the request's record, delivered or not.
  if (mid.is_response() && !requests_.answered(msg.target, mid)) {
    refuse(msg, unasked_response(msg), token, host);
    return;
  }
  auto target = addressable(msg.target);
  if (!target) {
    refuse(msg,
           caf::make_error(errc::no_such_actor,
                           "node " + ctx_.node_name + " has no actor " +
                             std::to_string(msg.target) + " for node " +
                             peer_name_ + " (terminated or never exposed)"),
           token, host);
    return;
  }
  auto fail = [&](caf::error reason) {
    if (mid.is_response()) {
      // The requester gets the reason now instead of waiting out its
      // timeout; the peer hears of it too (refuse).
      delivery_batch::post(
        target, caf::make_mailbox_element(nullptr, mid, {}, reason), host);
    }
    refuse(msg, std::move(reason), token, host);
  };
  caf::strong_actor_ptr sender;
  if (msg.sender != 0) {
    auto made = sender_proxy(msg.sender);
    if (made) {
      sender = std::move(*made);
    } else if (!mid.is_response()) {
      fail(std::move(made.error()));
      return;
    }
    // A response still reaches its requester, without a sender: the
    // requester waits for it, and it takes no slot in the table.
  }
  auto content = [&]() -> caf::expected<caf::message> {
    // Decoders turn what they throw into errors; this catches the rest (an
    // allocation failing outside them, say): a refusal, never a dead node.
    try {
      return decode_message(msg);
    } catch (...) {
      return caf::make_error(
        errc::decode_failed,
        "decoding a message from node " + peer_name_ +
          " threw: " + serializers::detail::current_exception_text());
    }
  }();
  if (!content) {
    fail(std::move(content.error()));
    return;
  }
  delivery_batch::post(
    target,
    caf::mailbox_element_ptr{new credited_element(
      std::move(sender), mid, std::move(*content), std::move(token))},
    host);
}

caf::expected<chunk_reply> link_state::serve_chunk(const chunk_request& req) {
  auto reply = transfers_.serve(req);
  if (reply)
    counters_.bytes_pulled_by_peer += req.length;
  return reply;
}

caf::error link_state::unasked_response(const wire_message& msg) const {
  auto& me = ctx_.node_name;
  return caf::make_error(
    errc::unasked_response,
    "node " + me + " refused a response from node " + peer_name_ +
      " to actor " + std::to_string(msg.target) + " (request " +
      std::to_string(request_key(caf::message_id{msg.mid})) +
      "): no such request of that actor went to node " + peer_name_ +
      " on this link, or it was answered already, its asker ended, or it "
      "was dropped as the oldest of more than " +
      std::to_string(requests_.capacity()) +
      " requests waiting for answers (ferry.link.max-pending-requests)");
}

void link_state::fail_evicted(const pending_requests::entry& oldest) {
  auto requester = caf::actor_cast<caf::strong_actor_ptr>(oldest.requester);
  if (!requester)
    return;
  requester->enqueue(
    caf::make_mailbox_element(
      nullptr, oldest.mid.response_id(), {},
      caf::make_error(
        errc::too_many_requests,
        "node " + ctx_.node_name + " has " +
          std::to_string(requests_.capacity()) +
          " requests waiting for answers from node " + peer_name_ +
          " (ferry.link.max-pending-requests); this one, the oldest, "
          "failed to make room; raise the setting if that many requests "
          "wait at once, or give requests that may go unanswered a timeout "
          "and let their actors end")),
    nullptr);
}

void link_state::on_refusal(const refusal& x) {
  // Counted after the log line, so whoever sees the count sees the line.
  log_limited(log_topic::refused_by_peer,
              "node " + peer_name_ + " refused a message: " + render(x.reason));
  ++counters_.refused_by_peer;
}

// -- going down ---------------------------------------------------------------

bool link_state::shut_down(const caf::error& reason, caf::execution_unit* host,
                           bool orderly) {
  if (down_.exchange(true))
    return false;
  window_.close();
  caf::actor flusher;
  if (orderly) {
    // What was sent goes out, then the goodbye; the transport then ends in
    // order.
    wire::out_frame bye{wire::frame_type::goodbye};
    bye.finish();
    flusher = outbox_.close(std::move(bye));
    out_->close(true);
  } else {
    // The transport first: a sender waiting for room in a lane's ring
    // wakes.
    out_->close(false);
    flusher = outbox_.close();
  }
  // The peer's side of the lane sees it closed and goes down too.
  if (auto in = lane_in_.load()) {
    in->close();
    in->unlink();
  }
  // Released at the end of this function: dropping the last reference to an
  // actor runs its cleanup on this thread.
  auto actors = actors_.close();
  for (auto& [id, child] : actors.spawned)
    caf::anon_send_exit(child, caf::exit_reason::remote_link_unreachable);
  // Store objects the peer never redeemed go before pending requests fail
  // and proxies die: a requester whose request failed with link_down finds
  // their memory freed.
  release_unsent(tickets_.close(), {});
  transfers_.clear();
  if (auto puller = inbox_.close())
    caf::anon_send_exit(puller, caf::exit_reason::remote_link_unreachable);
  if (flusher)
    caf::anon_send_exit(flusher, caf::exit_reason::remote_link_unreachable);
  for (auto& victim : actors.proxies)
    kill_proxy(victim, reason, host);
  auto down = caf::make_error(
    errc::link_down,
    "the link to node " + peer_name_ +
      " went down before the answer arrived: " + render(reason));
  asks_.fail_all(down);
  // Fail every request still waiting for an answer from the peer.
  for (auto& entry : requests_.close())
    if (auto requester =
          caf::actor_cast<caf::strong_actor_ptr>(entry.requester))
      requester->enqueue(
        caf::make_mailbox_element(
          nullptr, entry.mid.response_id(), {},
          caf::make_error(
            errc::link_down,
            "the link to node " + peer_name_ +
              " went down before the response arrived: " + render(reason))),
        host);
  return true;
}

bool link_state::drain_lane(const caf::error& why) {
  auto in = lane_in_.load();
  if (!in || down_.load())
    return false;
  std::shared_ptr<const caf::error> expected;
  if (!drain_reason_.compare_exchange_strong(
        expected, std::make_shared<const caf::error>(why)))
    return false;
  in->close();
  // The peer reads nothing more: a sender waiting for room in the way out
  // wakes, and what comes is dropped.
  out_->close(false);
  return true;
}

caf::error link_state::drain_reason() const {
  auto x = drain_reason_.load();
  return x ? *x : caf::error{};
}

void link_state::adopt_lane_in(std::shared_ptr<lane::ring> in) {
  lane_in_.store(in);
  // Either this sees the link down or shut_down sees the ring.
  if (down_.load()) {
    in->close();
    in->unlink();
  }
}

// -- stats --------------------------------------------------------------------

link_stats link_state::snapshot() const {
  link_stats result;
  result.peer = peer_name_;
  result.same_host = ctx_.same_host;
  result.lane = outbox_.on_lane();
  result.tls = outbox_.on_tls();
  result.send_families = encoder_.send_families();
  result.messages_sent = counters_.messages_sent;
  result.messages_received = counters_.messages_received;
  result.bytes_inline_sent = counters_.bytes_inline_sent;
  result.bytes_inline_received = counters_.bytes_inline_received;
  result.bytes_spilled_sent = counters_.bytes_spilled_sent;
  result.bytes_spilled_received = counters_.bytes_spilled_received;
  result.bytes_pulled_by_peer = counters_.bytes_pulled_by_peer;
  result.bytes_relayed_to_peer = counters_.bytes_relayed_to_peer;
  result.bytes_relayed_by_peer = counters_.bytes_relayed_by_peer;
  result.bytes_pulled = counters_.bytes_pulled;
  result.refusals = counters_.refusals;
  result.refused_by_peer = counters_.refused_by_peer;
  result.send_errors = counters_.send_errors;
  result.credit_waits = counters_.credit_waits;
  result.credit_wait_seconds =
    static_cast<double>(counters_.credit_wait_nanos.load()) * 1e-9;
  result.refusals_by_reason = counters_.refusal_reasons();
  result.batch_messages = counters_.batch_messages.snapshot();
  result.peak_in_flight_bytes = counters_.peak_in_flight_bytes;
  result.held_messages = held_.messages();
  result.held_bytes = held_.bytes();
  result.pending_requests = requests_.size();
  result.credits_received = counters_.credits_received;
  result.batches_sent = counters_.batches_sent;
  result.messages_batched = counters_.messages_batched;
  result.unasked_answers = counters_.unasked_answers;
  result.tickets_in_transit = tickets_.size();
  result.transfers_held = transfers_.size();
  result.proxies = actors_.proxies();
  result.spawned_actors = actors_.spawned();
  result.sent_by_family = sent_by_family_.snapshot();
  result.received_by_family = received_by_family_.snapshot();
  result.encode_seconds = sent_by_family_.times();
  result.decode_seconds = received_by_family_.times();
  return result;
}

} // namespace ferry::detail
