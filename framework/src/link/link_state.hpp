// link_state: one link between this node and a peer node.
//
// A message's way over a link (docs/architecture.md, "A message's way"):
//
//   sender actor --enqueue--> remote_proxy (this node, sender's thread)
//     encoder: encode with the link's family, spill or hold large frames
//     credit_window: take credit;  outbox: number, batch, send
//   --message frame--> transport (a connection of ferry's own, or a
//     same-host lane) --> peer's dispatcher (peer node, the thread reading
//     the connection or lane): held_limits, pull_queue (behind pulled
//     frames), decoder, deliver
//   --credited_element--> target actor; when the target has processed the
//     message, credit_return sends the credit back.
//
// The link composes parts with one job each, each guarding its own state:
// encoder, decoder, outbox (with ticket_ledger and transfer_table),
// credit_window (sender), credit_return and held_limits (receiver),
// pending_requests (actors' requests), pending_asks (this node's own requests:
// lookups, spawns, chunks), actor_table, pull_queue, and counters. Everything
// the link sends leaves through its transport (transport/transport.hpp);
// everything that arrives on it belongs to it. link_state holds no lock of its
// own; what spans parts lives here: sending (encode, credit, post), receiving
// (hold, deliver or refuse), and going down.
//
// Invariants:
// - Every wire_message a node sends takes credit for `wire_size(msg)` bytes
//   and one message; the receiving node returns exactly that credit once the
//   target actor has processed (or the node refused) the message.
// - A ticket exported for a store frame or an in-band handle is either
//   redeemed by the receiver or cancelled (receiver refusal, send failure,
//   link down).
// - Once down, the link sends nothing, fails every pending request with
//   `link_down`, terminates its proxies and the actors the peer spawned.
//
// Thread-safety: every member function may be called from any thread.
// Proxies, the puller and credit tokens hold the link weakly; the node
// holds it strongly while it is up.
#pragma once

#include "activity_counter.hpp"
#include "lane/ring.hpp"
#include "link/actor_table.hpp"
#include "link/credit_return.hpp"
#include "link/credit_window.hpp"
#include "link/credited_element.hpp"
#include "link/decoder.hpp"
#include "link/encoder.hpp"
#include "link/handle_translation.hpp"
#include "link/held_limits.hpp"
#include "link/link_context.hpp"
#include "link/link_counters.hpp"
#include "link/link_host.hpp"
#include "link/outbox.hpp"
#include "link/pending_asks.hpp"
#include "link/pending_requests.hpp"
#include "link/ticket_ledger.hpp"
#include "log_limiter.hpp"
#include "transfer/pull_queue.hpp"
#include "transfer/transfer_table.hpp"
#include "transport/transport.hpp"
#include "wire/control.hpp"
#include "wire/message.hpp"

#include "ferry/link_config.hpp"
#include "ferry/link_stats.hpp"

#include <caf/actor.hpp>
#include <caf/make_message.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ferry::detail {

/// Who the peer of a link is: its intro and the hello it sent.
struct peer_info {
  intro who;
  hello offer;
};

class link_state : public std::enable_shared_from_this<link_state> {
public:
  /// A link of the node `host` to the peer `peer`, sending with
  /// `send_families` through `out`.
  link_state(link_host& host, const peer_info& peer, link_config cfg,
             std::vector<std::string> send_families, bool same_host,
             std::shared_ptr<transport> out);

  ~link_state();

  // -- identity ---------------------------------------------------------------

  const std::string& peer_name() const { return peer_name_; }
  /// The peer's node id (wire/control.hpp, `intro`).
  uint64_t peer_id() const { return peer_id_; }
  const link_config& config() const { return cfg_; }
  bool is_down() const { return down_.load(); }
  link_host& host() { return host_; }

  /// Returns the id of the peer's published default actor (0: none).
  uint64_t default_actor() const { return default_actor_.load(); }
  void set_default_actor(uint64_t id) { default_actor_ = id; }

  // -- sending ----------------------------------------------------------------

  /// Encodes `msg` and sends it to actor `target` on the peer. `sender` and
  /// `mid` keep CAF's request/response semantics. Returns an error (and
  /// sends nothing) when encoding fails, the message is too large, the link
  /// is down, or no credit came within `send_timeout`.
  caf::error send(uint64_t target, const caf::strong_actor_ptr& sender,
                  caf::message_id mid, caf::message msg,
                  caf::execution_unit* host);

  /// Sends a control frame (a type of wire/control.hpp) to the peer after
  /// the messages posted before it.
  template <class T>
  void send_control(const T& x) {
    if (!down_)
      outbox_.send_frame(wire::make_frame(x));
  }

  /// Sends a finished frame (an answer) after the messages posted before
  /// it.
  void send_frame(wire::out_frame&& frame) {
    if (!down_)
      outbox_.send_frame(std::move(frame));
  }

  /// Sends the batch of small messages the link holds (its flusher);
  /// returns how long it may still wait while a burst fills it, zero once
  /// sent (see outbox::flush).
  [[nodiscard]] clock::duration flush() { return outbox_.flush(); }

  /// Returns the node's clock.
  const clock& time() const { return host_.time(); }

  /// Keeps `in`, the ring the peer writes this link's frames into, to
  /// close it (and remove its name) with the link; closes it at once when
  /// the link is down already.
  void adopt_lane_in(std::shared_ptr<lane::ring> in);

  /// The link's connection ended (`why`) while its incoming same-host lane
  /// may still hold what the peer wrote before: closes the ring for writing
  /// so its reader takes the rest and then takes the link down, and closes
  /// the way out (the peer reads nothing more). Returns
  /// false (and does nothing) without a lane, or when it drains already.
  bool drain_lane(const caf::error& why);

  /// Returns why the lane drains (none when it does not).
  caf::error drain_reason() const;

  // -- this node's requests ---------------------------------------------------

  /// Asks the peer for the id of the actor it exposes as `name` (empty: its
  /// default actor); `done` gets the answer on the thread that reads it.
  /// Returns the request id (0: the link is down, and `done` heard of it).
  uint64_t ask_lookup(const std::string& name, pending_asks::callback done);

  /// Asks the peer to spawn the actor type `type_name` with `args`; `done`
  /// gets the new actor's id or the error. Returns the request id as
  /// `ask_lookup` does, or the error encoding `args` met (nothing sent,
  /// `done` not called). The arguments' store tickets and held frames go
  /// back when the spawn fails, the link goes down, or its asker gives up
  /// (`give_up_ask`).
  caf::expected<uint64_t> ask_spawn(const std::string& type_name,
                                    const caf::message& args,
                                    pending_asks::callback done);

  /// Asks the peer for `length` bytes at `offset` of transfer `transfer`
  /// (or, with `relay_key`, of the object it relays under that key),
  /// landing at `offset` of `target`; returns the request id (0: the link
  /// is down, and `done` heard of it).
  uint64_t ask_chunk(uint64_t transfer, uint64_t relay_key, uint64_t offset,
                     uint64_t length, std::shared_ptr<landing_buffer> target,
                     pending_asks::callback done);

  /// Forgets request `id` (its asker gave up waiting).
  void forget_ask(uint64_t id) { asks_.forget(id); }

  /// Ends request `id` with `why` (its asker gave up waiting): what the
  /// request holds goes back, and a late answer counts as unasked.
  void give_up_ask(uint64_t id, caf::error why);

  /// Returns this node's requests to the peer that wait for an answer.
  pending_asks& asks() { return asks_; }

  /// Takes credit returned by the peer: wakes waiting senders and forgets
  /// the store tickets and transfers of messages the peer has taken.
  void on_credit(const credit& x);

  /// A sender on the peer waits for credit: return what is processed now and
  /// the rest as soon as it is processed.
  void on_probe();

  /// Called by `credit_token`: the local target processed `bytes` (of a
  /// message counted as held when `held`).
  void return_credit(uint64_t bytes, bool held);

  // -- receiving --------------------------------------------------------------

  /// Takes a message from the peer: delivers it at once, or queues it behind
  /// messages whose large frames are still being pulled (order is kept).
  void receive(wire_message& msg, uint64_t wire_size,
               caf::execution_unit* host);

  /// Decodes `msg` and delivers it to its target. Refuses (and answers the
  /// sender with a typed error) what it cannot deliver.
  void deliver(wire_message& msg, uint64_t wire_size,
               caf::execution_unit* host);

  /// Refuses a message taken off the link without `deliver` (a pull that
  /// failed, or one beyond the held limits): also returns its credit, and
  /// what it held of the peer's when `held`.
  void refuse_taken(wire_message& msg, uint64_t wire_size, caf::error reason,
                    caf::execution_unit* host, bool held = true);

  /// Returns the next message queued behind pulled frames, or nothing (then
  /// the queue is idle).
  std::optional<std::pair<wire_message, uint64_t>> take_queued() {
    return inbox_.take();
  }

  /// Decodes every element of `msg` (allowlist, limits, store frames).
  caf::expected<caf::message> decode_message(wire_message& msg) {
    serializers::handle_scope handles{handles_};
    return decoder_.decode_message(msg);
  }

  /// Creates the local copy of object `object_id` of the peer's store (see
  /// `decoder::create_import`).
  caf::expected<store::object_builder> create_import(uint64_t object_id,
                                                     uint64_t size) {
    return decoder_.create_import(object_id, size);
  }

  /// Serves a chunk of a frame this node holds for the peer.
  caf::expected<chunk_reply> serve_chunk(const chunk_request& req);

  /// The peer has (or gave up on) a pulled frame: release it.
  void finish_transfer(uint64_t id) { transfers_.finish(id); }

  /// Counts bytes pulled from the peer.
  void count_pulled(uint64_t n) { counters_.bytes_pulled += n; }

  /// Counts bytes of another node's object this node relayed to the peer.
  void count_relayed(uint64_t n) { counters_.bytes_relayed_to_peer += n; }

  /// Counts bytes of another node's object this node pulled from the peer.
  void count_pulled_relayed(uint64_t n) {
    counters_.bytes_relayed_by_peer += n;
  }

  /// Counts (and logs) an answer from the peer to a request this node is
  /// not waiting for.
  void count_unasked();

  /// The peer refused a one-way message of this node's: logs and counts.
  void on_refusal(const refusal& x);

  /// What a link logs about messages it could not pass on.
  enum class log_topic {
    /// This node refused a one-way message from the peer.
    refused,
    /// The peer refused a one-way message of this node's.
    refused_by_peer,
    /// A one-way message of this node's could not be sent.
    send_failed,
    /// The peer answered a request this node does not wait for (late, or
    /// invented).
    unasked,
  };

  /// Logs `line` on `topic`: at most one line a second for each topic, the
  /// next one counting the lines left out.
  void log_limited(log_topic topic, const std::string& line);

  // -- actors -----------------------------------------------------------------

  /// Returns the proxy for actor `id` of the peer, creating it if needed
  /// (a proxy of an actor the peer reported down is returned terminated).
  /// For this node's own calls (`remote_actor`, `remote_spawn`): made even
  /// when the link holds `max_proxies` already.
  caf::strong_actor_ptr proxy(uint64_t id) { return actors_.proxy(id, false); }

  /// Returns the proxy for actor `id` of the peer, named as a message's
  /// sender; `too_many_proxies` when making it would exceed `max_proxies`.
  caf::expected<caf::strong_actor_ptr> sender_proxy(uint64_t id);

  /// Makes a local actor reachable by the peer under its id (for responses
  /// and replies); the peer learns when it terminates.
  uint64_t export_actor(const caf::strong_actor_ptr& whom);

  /// Returns a local actor exported to the peer, or null.
  caf::strong_actor_ptr exported(uint64_t id) { return actors_.exported(id); }

  /// Returns a local actor the peer may address (exported to it, or exposed
  /// by name to every peer), or null.
  caf::strong_actor_ptr addressable(uint64_t id);

  /// Takes a slot for an actor the peer asks this node to spawn (of type
  /// `type_name`); `too_many_actors` when the peer has
  /// `max_spawned_actors` live ones here already. The caller keeps the link
  /// alive while it holds the slot.
  caf::expected<spawn_slot> reserve_spawn(const std::string& type_name);

  /// Records an actor spawned for the peer in `slot`: it is terminated when
  /// the link goes down (the spawning node owns it), and forgotten when it
  /// ends.
  void adopt_spawned(spawn_slot slot, caf::actor whom);

  /// The peer reports that its actor `id` terminated.
  void on_down(uint64_t id, const caf::error& reason,
               caf::execution_unit* host);

  /// Marks the link down: proxies terminate with `reason`, waiting senders
  /// fail, tickets in transit are cancelled, pending requests fail. With
  /// `orderly` (this node stops), what was sent goes out first, then a
  /// `goodbye`, and the transport ends in order. Returns whether this call
  /// took the link down (false when it was down already).
  bool shut_down(const caf::error& reason, caf::execution_unit* host,
                 bool orderly = false);

  // -- stats ------------------------------------------------------------------

  link_stats snapshot() const;

private:
  /// Encodes `msg` for actor `target` of the peer into `out` (see
  /// `encoder::encode_message`), exporting `sender` to the peer.
  caf::error encode_message(uint64_t target,
                            const caf::strong_actor_ptr& sender,
                            caf::message_id mid, const caf::message& msg,
                            std::vector<store::transfer_ticket>& tickets,
                            std::vector<uint64_t>& transfers,
                            inline_one<std::string>& families,
                            wire_message& out);

  /// Cancels the store tickets and releases the transfers of a message that
  /// was not sent.
  void release_unsent(const std::vector<store::transfer_ticket>& tickets,
                      const std::vector<uint64_t>& transfers);

  /// Refuses `msg`: cancels its store tickets, releases `token` (the
  /// message's credit and what it held), then answers a request with
  /// `reason` or reports a one-way message to the sender's node (and logs
  /// it). A sender that reacts to the refusal thus finds the message gone
  /// from this node's held limits.
  void refuse(wire_message& msg, caf::error reason, credit_token& token,
              caf::execution_unit* host);

  /// Counts a message of `wire_size` bytes from the peer as held until its
  /// credit returns; `receiver_full` when the link holds `max_held_bytes` or
  /// `max_held_messages` of the peer's already (and the message answers no
  /// request of this node).
  caf::error hold(const wire_message& msg, uint64_t wire_size);

  /// Returns the credit for a message taken off the link when the token is
  /// destroyed (after the target processed it).
  credit_token take(uint64_t wire_size, bool held = true) {
    return credit_token{weak_from_this(), wire_size, held};
  }

  /// Returns why the response `msg` is refused: it answers no request of
  /// this node's that went to the peer (pending_requests).
  caf::error unasked_response(const wire_message& msg) const;

  /// Fails the request `oldest`, dropped from a full table of pending
  /// requests, with `too_many_requests`.
  void fail_evicted(const pending_requests::entry& oldest);

  /// Makes a live proxy for the peer's actor `id` (actor_table's factory).
  caf::strong_actor_ptr make_proxy(uint64_t id);

  // The node's count of live links: first, so it leaves last.
  activity_counter::scope alive_;
  link_host& host_;
  const std::string peer_name_;
  const uint64_t peer_id_;
  const link_config cfg_;
  std::atomic<bool> down_{false};
  std::atomic<uint64_t> default_actor_;

  link_counters counters_;
  family_counters sent_by_family_;
  family_counters received_by_family_;
  const type_check types_;
  link_context ctx_;

  transfer_table transfers_;
  ticket_ledger tickets_;
  encoder encoder_;
  decoder decoder_;
  const std::shared_ptr<transport> out_;
  outbox outbox_;
  /// The ring the node's lane reader takes this link's frames from (null:
  /// none); closed when the link goes down.
  std::atomic<std::shared_ptr<lane::ring>> lane_in_;
  /// Why the lane drains (`drain_lane`), set once.
  std::atomic<std::shared_ptr<const caf::error>> drain_reason_;
  pending_asks asks_;
  credit_window window_;
  credit_return returns_;
  held_limits held_;
  pending_requests requests_;
  actor_table actors_;
  pull_queue inbox_;
  /// Actor handles inside messages (installed around every encode/decode).
  handle_translation handles_{*this};

  // One limiter per log_topic.
  std::array<log_limiter, 4> logged_;
};

} // namespace ferry::detail
