// Internals of a ferry node: links, proxies and the gateway.
//
// Message flow (see docs/architecture.md, "A message's way"):
//
//   sender actor --enqueue--> remote_proxy (this node, sender's thread)
//     encode with the link's family, spill large frames, take credit
//   --wire_message--> peer's gateway proxy (CAF) --BASP--> peer's gateway
//     (peer node, middleman thread): allowlist check, decode, deliver
//   --credited_element--> target actor; when the target has processed the
//     message, the element's destructor returns the credit to the sender.
//
// Both custom actors (`remote_proxy`, `gateway`) do their work inside
// `enqueue`, on the caller's thread, the way CAF's own forwarding proxies do:
// no extra scheduling hop on either side, and credit returns never wait for a
// scheduler thread (so a sender blocked on credit cannot starve them).
#pragma once

#include "ferry/link_config.hpp"
#include "ferry/link_stats.hpp"
#include "ferry/node_config.hpp"

#include "detail/plan_cache.hpp"
#include "detail/wire.hpp"

#include "ferry/serializers/registry.hpp"
#include "ferry/store/object_store.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/monitorable_actor.hpp>
#include <caf/node_id.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <typeindex>
#include <unordered_map>
#include <vector>

namespace ferry::detail {

class node_impl;
class link_state;

/// Returns the bytes `msg` counts against a credit window (both nodes compute
/// the same figure).
uint64_t wire_size(const wire_message& msg);

/// Starts the actor that pulls large frames of queued messages of `link` in
/// chunks, in order, and delivers the messages (see link_state::receive).
caf::actor spawn_puller(caf::actor_system& sys, std::weak_ptr<link_state> link);

/// Raises glibc malloc's mmap and trim thresholds once per process (see
/// malloc_tuning.cpp); returns whether they are raised.
bool tune_malloc();

/// Tells a puller that messages are queued.
using pull_atom = caf::atom_constant<caf::atom("ferry_pull")>;

/// Tells a link's flusher to send the batch its link holds.
using flush_atom = caf::atom_constant<caf::atom("ferry_fls")>;

/// Renders a family list as "[a, b, c]" for error messages.
std::string join(const std::vector<std::string>& xs);

/// Returns the part of a request or response id that both share.
uint64_t request_key(caf::message_id mid);

/// Atomic counters behind `link_stats`.
struct link_counters {
  std::atomic<uint64_t> messages_sent{0};
  std::atomic<uint64_t> messages_received{0};
  std::atomic<uint64_t> bytes_inline_sent{0};
  std::atomic<uint64_t> bytes_inline_received{0};
  std::atomic<uint64_t> bytes_spilled_sent{0};
  std::atomic<uint64_t> bytes_spilled_received{0};
  std::atomic<uint64_t> bytes_pulled_by_peer{0};
  std::atomic<uint64_t> bytes_pulled{0};
  std::atomic<uint64_t> refusals{0};
  std::atomic<uint64_t> refused_by_peer{0};
  std::atomic<uint64_t> send_errors{0};
  std::atomic<uint64_t> credit_waits{0};
  std::atomic<uint64_t> peak_in_flight_bytes{0};
  std::atomic<uint64_t> credits_received{0};
  std::atomic<uint64_t> batches_sent{0};
  std::atomic<uint64_t> messages_batched{0};
  std::atomic<uint64_t> dropped_wrong_token{0};
};

/// Messages per family, for the families of one fixed list (a link's send
/// families or its allowlist); lock-free.
class family_counters {
public:
  explicit family_counters(std::vector<std::string> names);

  /// Counts one message of `family` (a name outside the list is not counted).
  void count(std::string_view family);

  /// Returns the families counted at least once, with their counts.
  std::map<std::string, uint64_t> snapshot() const;

private:
  std::vector<std::string> names_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;
};

/// Lets one line through per `interval` and counts the others, so that a
/// stream of refusals cannot flood a node's log. Thread-safe.
class log_limiter {
public:
  explicit log_limiter(std::chrono::steady_clock::duration interval)
    : interval_(interval) {
    // nop
  }

  /// Returns `line` to write now (saying how many lines like it were left
  /// out since the last one, if any), or nothing when it is left out.
  std::optional<std::string> pass(const std::string& line);

private:
  std::chrono::steady_clock::duration interval_;
  std::mutex mtx_;
  std::optional<std::chrono::steady_clock::time_point> last_;
  uint64_t left_out_ = 0;
};

/// Returns `bytes` messages' worth of credit to the sending node when the
/// receiving actor is done with the message (held by `credited_element`);
/// a `held` message also leaves what the link holds of the peer's.
class credit_token {
public:
  credit_token() = default;
  credit_token(std::weak_ptr<link_state> link, uint64_t bytes, bool held)
    : link_(std::move(link)), bytes_(bytes), held_(held) {
    // nop
  }
  credit_token(credit_token&& other) noexcept
    : link_(std::move(other.link_)),
      bytes_(std::exchange(other.bytes_, 0)),
      held_(other.held_) {
    // nop
  }
  credit_token& operator=(credit_token&&) = delete;
  ~credit_token() { release(); }

  /// Returns the credit (and what the message held) now; nothing later.
  void release();

private:
  std::weak_ptr<link_state> link_;
  uint64_t bytes_ = 0;
  bool held_ = false;
};

/// A place for one actor the peer spawns on this node
/// (`link_state::reserve_spawn`): given back when destroyed, unless
/// `link_state::adopt_spawned` took it over.
class spawn_slot {
public:
  spawn_slot(spawn_slot&& other) noexcept
    : link_(std::exchange(other.link_, nullptr)) {
    // nop
  }
  spawn_slot& operator=(spawn_slot&&) = delete;
  ~spawn_slot();

private:
  friend class link_state;
  explicit spawn_slot(link_state* link) : link_(link) {
    // nop
  }
  link_state* link_;
};

/// A mailbox element that returns link credit when destroyed, i.e. after the
/// receiving actor processed (or dropped) it.
class credited_element final : public caf::mailbox_element {
public:
  credited_element(caf::strong_actor_ptr sender, caf::message_id mid,
                   caf::message content, credit_token token);

  caf::type_erased_tuple& content() override;
  const caf::type_erased_tuple& content() const override;
  caf::message move_content_to_message() override;
  caf::message copy_content_to_message() const override;

private:
  caf::message msg_;
  caf::empty_type_erased_tuple empty_;
  credit_token token_;
};

/// Stands for one actor of a peer node. Anything enqueued here is encoded and
/// sent over the link; the proxy terminates when the remote actor does or the
/// link goes down, so `monitor` works as in CAF.
class remote_proxy final : public caf::monitorable_actor {
public:
  remote_proxy(caf::actor_config& cfg, std::weak_ptr<link_state> link,
               uint64_t remote_id);

  void enqueue(caf::mailbox_element_ptr what,
               caf::execution_unit* host) override;

  const char* name() const override { return "ferry.remote_proxy"; }

  /// Terminates the proxy: monitors get a down message with `reason`.
  void kill(caf::error reason, caf::execution_unit* host);

  /// Returns the actor id on the peer node.
  uint64_t remote_id() const { return remote_id_; }

private:
  std::weak_ptr<link_state> link_;
  uint64_t remote_id_;
};

/// Receives everything peers send to this node: handshakes, user messages,
/// credit, down notices, chunk requests. Published on the node's port.
class gateway final : public caf::monitorable_actor {
public:
  gateway(caf::actor_config& cfg, node_impl* node);

  void enqueue(caf::mailbox_element_ptr what,
               caf::execution_unit* host) override;

  const char* name() const override { return "ferry.gateway"; }

  /// Detaches from the node (called while the node shuts down) and returns
  /// once no `enqueue` still uses it: CAF's BASP workers outlive the node's
  /// members, and may be inside `enqueue` when the node goes.
  void detach_node();

private:
  std::atomic<node_impl*> node_;
  /// `enqueue` calls running now (they load `node_` after counting
  /// themselves, so once `detach_node` saw this at 0 none has the node).
  std::atomic<uint32_t> in_flight_{0};
};

/// The state of one link, shared by its proxies, the gateway and the node.
/// Thread-safe.
class link_state : public std::enable_shared_from_this<link_state> {
public:
  friend class spawn_slot;

  /// `inbound_token` is the token this node named in its hello to the peer
  /// (the peer's own is in `peer`).
  link_state(node_impl& node, const hello& peer, link_config cfg,
             std::vector<std::string> send_families, bool same_host,
             uint64_t inbound_token);

  ~link_state();

  // -- identity ---------------------------------------------------------------

  const std::string& peer_name() const { return peer_name_; }
  const caf::node_id& peer_node() const { return peer_node_; }
  const caf::actor& peer_gateway() const { return peer_gateway_; }
  const link_config& config() const { return cfg_; }
  bool same_host() const { return same_host_; }
  bool is_down() const { return down_.load(); }

  /// The token this node expects on what the peer sends over this link.
  uint64_t inbound_token() const { return inbound_token_; }
  /// The token the peer expects on what this node sends it.
  uint64_t outbound_token() const { return outbound_token_; }

  /// Whether `token` is this link's; if not, counts and logs the drop of
  /// `what` (a forgery by a third node, or left over from an earlier link).
  bool admits(uint64_t token, const char* what);

  /// Returns the id of the peer's published default actor (0: none).
  uint64_t default_actor() const { return default_actor_.load(); }
  void set_default_actor(uint64_t id) { default_actor_ = id; }
  node_impl& node() { return node_; }

  // -- sending ----------------------------------------------------------------

  /// Encodes `msg` and sends it to actor `target` on the peer. `sender` and
  /// `mid` keep CAF's request/response semantics. Returns an error (and
  /// sends nothing) when encoding fails, the message is too large, the link
  /// is down, or no credit came within `send_timeout`.
  caf::error send(uint64_t target, const caf::strong_actor_ptr& sender,
                  caf::message_id mid, caf::message msg,
                  caf::execution_unit* host);

  /// Encodes `msg` for actor `target` of the peer into `out` (a fresh
  /// wire_message, filled in place: it holds its first element inline, so
  /// moving it is not free); exports `sender`. Adds the store tickets it
  /// exported to `tickets` and the family of each element to `families`.
  caf::error encode_message(uint64_t target,
                            const caf::strong_actor_ptr& sender,
                            caf::message_id mid, const caf::message& msg,
                            std::vector<store::transfer_ticket>& tickets,
                            std::vector<uint64_t>& transfers,
                            inline_one<std::string>& families,
                            wire_message& out);

  /// Sends a control message (a wire type with a `token`) to the peer's
  /// gateway, with the link's token, after the messages the link holds in
  /// its batch, so order is kept.
  template <class T>
  void send_control(T x, caf::execution_unit* host) {
    x.token = outbound_token_;
    send_control_message(caf::make_message(std::move(x)), host);
  }

  /// Sends the batch of small messages the link holds (called by its
  /// flusher actor).
  void flush();

  /// Adds credit returned by the peer, forgets the store tickets of
  /// messages it has taken, and wakes waiting senders.
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

  /// Refuses `msg`: cancels its store tickets, releases `token` (the
  /// message's credit and what it held), then answers a request with
  /// `reason` or reports a one-way message to the sender's node (and logs
  /// it). A sender that reacts to the refusal thus finds the message gone
  /// from this node's held limits.
  void refuse(wire_message& msg, caf::error reason, credit_token& token,
              caf::execution_unit* host);

  /// What a link logs about messages it could not pass on.
  enum class log_topic {
    /// This node refused a one-way message from the peer.
    refused,
    /// The peer refused a one-way message of this node's.
    refused_by_peer,
    /// A one-way message of this node's could not be sent.
    send_failed,
    /// A message said to come from the peer lacked the link's token.
    wrong_token,
  };

  /// Logs `line` on `topic`: at most one line a second for each topic, the
  /// next one counting the lines left out.
  void log_limited(log_topic topic, const std::string& line);

  /// Refuses a message taken off the link without `deliver` (a pull that
  /// failed, or one beyond the held limits): also returns its credit, and
  /// what it held of the peer's when `held`.
  void refuse_taken(wire_message& msg, uint64_t wire_size, caf::error reason,
                    caf::execution_unit* host, bool held = true);

  /// Returns the next queued message, or nothing (then the queue is idle).
  std::optional<std::pair<wire_message, uint64_t>> take_queued();

  /// Serves a chunk of a frame this node holds for the peer.
  caf::expected<chunk_reply> serve_chunk(const chunk_request& req);

  /// The peer has (or gave up on) a pulled frame: release it.
  void finish_transfer(uint64_t id);

  /// Creates the local copy of object `object_id` (`size` bytes) of the
  /// peer's store, which a message holds a handle to; the error says why it
  /// cannot (no store, store full).
  caf::expected<store::object_builder> create_import(uint64_t object_id,
                                                     uint64_t size);

  /// Returns the token of the peer's store (0: none).
  uint64_t peer_store_token() const { return peer_store_token_; }

  /// Counts bytes pulled from the peer.
  void count_pulled(uint64_t n) { counters_.bytes_pulled += n; }

  /// Decodes every element of `msg` (allowlist, limits, store frames).
  caf::expected<caf::message> decode_message(wire_message& msg);

  // -- actors -----------------------------------------------------------------

  /// Returns the proxy for actor `id` of the peer, creating it if needed
  /// (a proxy of an actor the peer reported down is returned terminated).
  /// For this node's own calls (`remote_actor`, `remote_spawn`): made even
  /// when the link holds `max_proxies` already.
  caf::strong_actor_ptr proxy(uint64_t id);

  /// Returns the proxy for actor `id` of the peer, named as a message's
  /// sender; `too_many_proxies` when making it would exceed `max_proxies`.
  caf::expected<caf::strong_actor_ptr> sender_proxy(uint64_t id);

  /// Makes a local actor reachable by the peer under its id (for responses
  /// and replies); the peer learns when it terminates.
  uint64_t export_actor(const caf::strong_actor_ptr& whom);

  /// Takes a slot for an actor the peer asks this node to spawn (of type
  /// `type_name`); `too_many_actors` when the peer has
  /// `max_spawned_actors` live ones here already. The caller keeps the link
  /// alive while it holds the slot.
  caf::expected<spawn_slot> reserve_spawn(const std::string& type_name);

  /// Records an actor spawned for the peer in `slot`: it is terminated when
  /// the link goes down (the spawning node owns it), and forgotten when it
  /// ends.
  void adopt_spawned(spawn_slot slot, caf::actor whom);

  /// Returns a local actor the peer may address, or null.
  caf::strong_actor_ptr exported(uint64_t id);

  /// The peer reports that its actor `id` terminated.
  void on_down(uint64_t id, const caf::error& reason,
               caf::execution_unit* host);

  /// Marks the link down: proxies terminate with `reason`, waiting senders
  /// fail, tickets in transit are cancelled.
  void shut_down(const caf::error& reason, caf::execution_unit* host);

  // -- stats ------------------------------------------------------------------

  link_counters& counters() { return counters_; }

  void count_sent_family(const std::string& family);
  void count_received_family(const std::string& family);

  link_stats snapshot() const;

private:
  /// Encodes one element into `result` (fresh, filled in place).
  caf::error encode_element(std::type_index type, const void* value,
                            const std::shared_ptr<const void>& keep_alive,
                            std::string& family_used,
                            std::vector<store::transfer_ticket>& tickets,
                            std::vector<uint64_t>& transfers,
                            wire_element& result);

  /// A value encoded for the wire: its payload header, frames and family.
  struct encoded_value {
    std::vector<std::byte> header;
    std::vector<serializers::frame> frames;
    std::string family;
  };

  /// Encodes `*value` with the link's families: by the type's plan when it
  /// has one (and it works for the value), else through the registry's
  /// general path (which names every family tried when none can).
  caf::expected<encoded_value>
  encode_value(std::type_index type, const void* value,
               const std::shared_ptr<const void>& keep_alive);

  /// Returns the link's encode plan for `type` (made on first use), or null
  /// when the type has none (see registry::plan_encode) or the cache is full.
  const serializers::registry::encode_plan* send_plan_for(std::type_index type);

  caf::expected<caf::message> decode_element(wire_element& element);

  /// Returns the decode plan for payload headers with `key` that the link
  /// accepted before, or null.
  const serializers::registry::decode_plan*
  receive_plan_for(std::span<const std::byte> key) const;

  /// Keeps `plan` for later headers with `key` when the cache has room and
  /// returns it there; else moves it into `own` and returns that.
  const serializers::registry::decode_plan*
  keep_receive_plan(std::span<const std::byte> key,
                    serializers::registry::decode_plan plan,
                    std::optional<serializers::registry::decode_plan>& own);

  /// Turns the tickets of handles a payload holds into `remote_handle`
  /// frames for a peer on another host: the objects stay here (as
  /// transfers) until the peer pulled them.
  caf::error export_handles(const std::vector<store::transfer_ticket>& tickets,
                            wire_element& element,
                            std::vector<uint64_t>& transfers);

  /// Registers `frame` as a transfer the peer pulls; returns its id.
  uint64_t add_transfer(std::shared_ptr<serializers::frame> frame);

  caf::error acquire_credit(uint64_t bytes, bool may_wait);

  /// Gives back a slot of `reserve_spawn` (from `~spawn_slot`).
  void cancel_spawn();

  /// Removes transfer `id` and returns its frame, for the caller to drop
  /// after the lock (requires `transfers_mtx_`).
  std::shared_ptr<serializers::frame> take_transfer_locked(uint64_t id);

  /// Sends `msg` (`size`: its wire_size) in link order, remembering
  /// `tickets` and the frames held for the peer to pull (`transfers`) until
  /// the peer has taken the message. Small messages of a burst join a batch
  /// instead.
  void post(wire_message&& msg, uint64_t size,
            const std::vector<store::transfer_ticket>& tickets,
            const std::vector<uint64_t>& transfers, caf::execution_unit* host);

  /// Sends the held batch, if any (requires `post_mtx_`).
  void flush_locked(caf::execution_unit* host);

  /// Enqueues `msg` to the peer's gateway (requires `post_mtx_`).
  void enqueue_locked(caf::message msg, caf::execution_unit* host);

  /// Returns the credit for a message taken off the link when the token is
  /// destroyed (after the target processed it).
  credit_token take(uint64_t wire_size, bool held = true);

  /// Counts a message of `wire_size` bytes from the peer as held until its
  /// credit returns; `receiver_full` when the link holds `max_held_bytes` or
  /// `max_held_messages` of the peer's already (and the message answers no
  /// request of this node).
  caf::error hold(const wire_message& msg, uint64_t wire_size);

  /// Whether `msg` is the first response taken beyond the held limits to a
  /// request this node sent the peer (and claims that place).
  bool answers_pending_request(const wire_message& msg);

  /// Takes the credit held back for the peer (requires `return_mtx_`).
  credit take_unreturned();

  void send_control_message(caf::message msg, caf::execution_unit* host);

  node_impl& node_;
  std::string peer_name_;
  caf::node_id peer_node_;
  caf::actor peer_gateway_;
  link_config cfg_;
  std::vector<std::string> send_families_;
  bool same_host_;
  // Link tokens (see wire_protocol_version).
  uint64_t inbound_token_;
  uint64_t outbound_token_;
  // Token of the peer's store (names it in handles the peer sends); 0: none.
  uint64_t peer_store_token_;
  uint64_t peer_window_bytes_;
  uint64_t peer_window_messages_;
  // Credit goes back in batches of a quarter of the smaller window.
  uint64_t byte_batch_;
  uint64_t message_batch_;
  std::atomic<bool> down_{false};
  std::atomic<uint64_t> default_actor_;
  // Options of every encode and decode on this link (built once).
  serializers::encode_options enc_opts_;
  serializers::decode_options dec_opts_;

  // Plans under those options (plan_cache.hpp): one per type sent, one per
  // payload header key accepted, each for the registry generation it was
  // made in (a later registration makes a new one).
  struct send_plan {
    std::type_index type;
    uint64_t generation;
    // None: the type takes registry::encode every time (e.g. a stand-in).
    std::optional<serializers::registry::encode_plan> plan;
  };
  struct receive_plan {
    std::vector<std::byte> key;
    uint64_t generation;
    serializers::registry::decode_plan plan;
  };
  static constexpr size_t max_plans = 64;
  plan_cache<send_plan, max_plans> send_plans_;
  plan_cache<receive_plan, max_plans> receive_plans_;

  // Requests sent to the peer and not answered yet: (local sender, request
  // id). When the link dies, each gets an error response, so no requester
  // waits for its timeout. A requester's entries leave when it ends.
  struct pending_request {
    caf::weak_actor_ptr requester;
    caf::message_id mid;
    /// A response was taken beyond the held limits: one per request passes
    /// them, not every copy a peer sends of it.
    bool answer_held = false;
  };
  mutable std::mutex requests_mtx_;
  std::map<std::pair<uint64_t, uint64_t>, pending_request> pending_;

  // Frames held for the peer to pull (cross host), by transfer id. The peer
  // releases each with `transfer_done` once pulled; a message it has taken
  // (the `delivered` count of its credit) needs none of its frames any
  // more, so those go then at the latest: a peer that never says
  // `transfer_done` cannot make this node hold them while the link lives.
  // Each byte is served once: a peer asking for the same range again and
  // again (without reading its socket) would grow CAF's send buffer here
  // without bound.
  struct held_transfer {
    std::shared_ptr<serializers::frame> frame;
    /// Bytes served so far.
    uint64_t served = 0;
  };
  mutable std::mutex transfers_mtx_;
  uint64_t next_transfer_ = 1;
  std::unordered_map<uint64_t, held_transfer> transfers_;
  // (sequence number of the message, transfer id), in sequence order.
  std::deque<std::pair<uint64_t, uint64_t>> transfers_by_message_;

  // Messages waiting behind one whose frames are being pulled, and the actor
  // that pulls them (spawned on first use).
  std::mutex inbox_mtx_;
  std::deque<std::pair<wire_message, uint64_t>> inbox_;
  bool draining_ = false;
  caf::actor puller_;

  // Wire messages go out in the order of their sequence numbers (one lock
  // around numbering and enqueueing), so the peer's `credit::delivered`
  // count says which were taken. Store tickets of messages the peer has not
  // taken yet, by sequence number: cancelled if the link dies first.
  std::mutex post_mtx_;
  uint64_t posted_ = 0;
  // Small messages of a burst, sent as one wire_batch when it is full or
  // when the flusher runs (scheduled when the first one joined).
  std::vector<wire_message> outbox_;
  uint64_t outbox_bytes_ = 0;
  bool flush_scheduled_ = false;
  std::chrono::steady_clock::time_point last_post_;
  caf::actor flusher_;
  /// A store ticket of a message sent and not yet taken by the peer.
  struct ticket_in_transit {
    /// The message's place in the order of posted messages.
    uint64_t seq = 0;
    store::transfer_ticket ticket;
    /// A handle's ticket inside the encoded value: the peer redeems it only
    /// if it decodes the message, and cannot see it to cancel it when it
    /// refuses the message (a frame's ticket it can).
    bool in_value = false;
  };
  mutable std::mutex tickets_mtx_;
  std::deque<ticket_in_transit> in_transit_;

  // Credit window (sender side).
  std::mutex credit_mtx_;
  std::condition_variable credit_cv_;
  uint64_t in_flight_bytes_ = 0;
  uint64_t in_flight_messages_ = 0;
  // A probe went out and no credit came back since.
  bool probing_ = false;
  // Senders waiting for credit, first come first served (see acquire_credit).
  std::deque<uint64_t> credit_waiters_;
  uint64_t next_credit_waiter_ = 0;

  // Credit to return (receiver side), in batches of a quarter window, or at
  // once after a probe.
  std::mutex return_mtx_;
  uint64_t unreturned_bytes_ = 0;
  uint64_t unreturned_messages_ = 0;
  // The peer waits for credit: return the next processed message at once.
  bool flush_requested_ = false;
  // Messages taken off the link (delivered or refused) after their store
  // tickets were redeemed or cancelled.
  std::atomic<uint64_t> taken_{0};
  // The peer's messages taken and not processed yet (bounded by
  // max_held_bytes / max_held_messages).
  std::atomic<uint64_t> held_bytes_{0};
  std::atomic<uint64_t> held_messages_{0};
  // One limiter per log_topic.
  std::array<log_limiter, 4> logged_{log_limiter{std::chrono::seconds{1}},
                                     log_limiter{std::chrono::seconds{1}},
                                     log_limiter{std::chrono::seconds{1}},
                                     log_limiter{std::chrono::seconds{1}}};

  // Returns the proxy for actor `id`, or null when the link holds
  // `max_proxies` already and `limited`.
  caf::strong_actor_ptr find_or_make_proxy(uint64_t id, bool limited);

  // Actors.
  mutable std::mutex actors_mtx_;
  // Proxies of the peer's actors, kept until the peer reports the actor down
  // or the link goes down (as CAF's proxy registry does): a weak slot made
  // and destroyed a proxy actor for every request whose sender nothing else
  // referenced.
  std::unordered_map<uint64_t, caf::strong_actor_ptr> proxies_;
  // Peer actors reported down that had no proxy yet (a message from them may
  // still wait for its pulled frames): their proxies are made terminated.
  // The last `max_recently_down` only.
  std::deque<std::pair<uint64_t, caf::error>> recently_down_;
  std::unordered_map<uint64_t, caf::strong_actor_ptr> exported_;
  // Actors spawned for the peer and still alive, terminated when the link
  // goes down; each leaves when it terminates.
  std::unordered_map<caf::actor_id, caf::actor> spawned_;
  // Slots of spawns under way (spawn_slot objects alive).
  uint64_t spawns_reserved_ = 0;

  link_counters counters_;
  family_counters sent_by_family_;
  family_counters received_by_family_;
};

/// Everything a node owns. Thread-safe.
class node_impl {
public:
  explicit node_impl(node_config& cfg);

  ~node_impl();

  caf::error init();

  caf::actor_system& system() { return sys_; }
  node_config& config() { return cfg_; }
  serializers::registry& registry() { return *registry_; }
  store::object_store* store() { return store_ ? &*store_ : nullptr; }
  const caf::actor& gateway_handle() const { return gateway_; }

  /// Returns this node's handshake for a link with the config `cfg`, without
  /// its `link_token` (which depends on the peer and its link).
  hello make_hello(const link_config& cfg) const;

  /// Answers a peer's handshake: creates the link (or fails naming both
  /// family lists) with `cfg`, or with the config for the peer's name when
  /// null.
  caf::expected<hello> accept(const hello& peer, caf::execution_unit* host,
                              const link_config* cfg = nullptr);

  /// Connects to `host`:`port` (or returns the existing link).
  caf::expected<std::shared_ptr<link_state>>
  connect(const std::string& host, uint16_t port);

  /// Returns the link to the CAF node `id`, or null.
  std::shared_ptr<link_state> find_link(const caf::node_id& id);

  /// Returns the link to the node named `name`, or null.
  std::shared_ptr<link_state> find_link(const std::string& name);

  /// Removes the link (after it went down).
  void drop_link(const caf::node_id& id);

  std::vector<std::shared_ptr<link_state>> links();

  // -- exposed actors ---------------------------------------------------------

  void publish_default(const caf::actor& whom);
  void expose(const std::string& name, const caf::actor& whom);
  caf::expected<uint64_t> lookup(const std::string& name);
  caf::strong_actor_ptr exposed(uint64_t id);
  uint64_t default_actor_id() const;

  // -- message types ----------------------------------------------------------

  /// Returns the registered name of the element at `pos` of `msg`, or null.
  const std::string* element_type(const caf::message& msg, size_t pos,
                                  std::type_index& type) const;

  /// Spawns the actor type a peer asked for and exports it on the peer's
  /// link; returns its id.
  caf::expected<uint64_t> spawn(spawn_request& req,
                                const caf::strong_actor_ptr& requester,
                                caf::execution_unit* host);

  /// Returns true if the host store is shared with the peer of `peer`.
  bool shares_store_with(const hello& peer) const;

  /// Logs one line (on stderr or to the config's `log_sink`), prefixed with
  /// the node name.
  void log(const std::string& line) const;

  /// Logs that a message came from a node without a link (a CAF peer that
  /// skipped ferry's handshake): at most one line a second.
  void log_unlinked(const std::string& line);

private:
  node_config& cfg_;
  caf::actor_system sys_;
  std::shared_ptr<serializers::registry> registry_;
  std::optional<store::object_store> store_;
  caf::actor gateway_;
  /// Trims the vector pool while the node runs (null when the pool is off).
  caf::actor janitor_;
  // Whether init() applied this node's vector-pool limits (and counts it as
  // a running node that set them).
  bool pool_applied_ = false;

  mutable std::mutex mtx_;
  std::map<caf::node_id, std::shared_ptr<link_state>> links_;
  std::map<std::string, caf::node_id> links_by_address_;
  std::map<std::string, caf::actor> exposed_by_name_;
  std::unordered_map<uint64_t, caf::strong_actor_ptr> exposed_by_id_;
  uint64_t default_actor_ = 0;
  log_limiter unlinked_logged_{std::chrono::seconds{1}};
  /// The token this node expects from a peer it has no link with yet (one
  /// per peer, so that handshakes crossing each other agree); a link takes
  /// it over when it is made. Kept when a handshake fails: the peer may
  /// have made its link with it all the same (a hello answered after the
  /// timeout), and the next hello must name the same token. Requires `mtx_`.
  std::map<caf::node_id, uint64_t> tokens_;
  std::random_device random_;

  /// Returns the token this node expects from `peer`: its link's, else the
  /// one kept in `tokens_` (made when first asked for). Requires `mtx_`.
  uint64_t inbound_token_locked(const caf::node_id& peer);
};

} // namespace ferry::detail
