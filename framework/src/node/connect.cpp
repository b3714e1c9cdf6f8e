// Connecting to a peer: CAF's connection, then ferry's handshake, and what
// happens when two nodes connect to each other at once (node_impl's part;
// see node/node_impl.hpp, node/handshake.cpp for the answering side).
//
// The steps: `remote_actor` makes CAF's connection (BASP's own handshake)
// and returns a proxy of the peer's gateway; `identify` asks the peer's
// name (which selects the link config); `hello` offers this node's side and
// the peer answers with its own after making its side of the link; this
// node then makes its side from the answer (`accept`). From the moment it
// sends its hello, the node holds what the peer sends before that side
// exists (node/early_arrivals.hpp) and hands it on once it does.
//
// Connecting at once. When two nodes connect to each other at the same
// moment, CAF 0.17 may keep neither connection: each node reads the peer's
// handshake on the connection the peer opened before the answer on its
// own, takes its own connection for redundant and closes it (BASP's
// `redundant_connection`), so both connections close and CAF kills the
// proxies it has just returned to both `remote_actor` calls. Nothing from
// outside CAF's broker can prevent that or close one chosen connection, so
// ferry recovers from CAF's definite signal instead: it watches the proxy
// of the peer's gateway during the handshake. When it dies, the node with
// the lower CAF node id connects once more (the peer does not connect then,
// so this connect cannot cross), and the other waits for the link that the
// peer's hello makes. In every other order CAF keeps at least one
// connection and the handshake goes on. A connect also ends, with that
// link, as soon as a link to its peer is made meanwhile by the peer's own
// hello.
//
// Thread-safety: `connect` may run on any number of threads at once; it
// blocks its caller for at most the handshake timeout per step.
#include "node/node_impl.hpp"

#include "node/gateway.hpp"

#include "ferry/errc.hpp"

#include <caf/actor_cast.hpp>
#include <caf/io/middleman.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/scoped_actor.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ferry::detail {

namespace {

/// What may end a handshake early.
enum alarm_reason : unsigned {
  /// CAF killed the proxy of the peer's gateway: it lost the connection.
  connection_lost = 1,
  /// A link to the peer was made by the peer's own hello.
  link_made = 2,
};

/// Wakes a connect that waits in its handshake when something ends it
/// early: it answers the request the connect waits for with an error, or
/// wakes `wait_link`. Rung from CAF's threads and the gateway's.
class handshake_alarm {
public:
  explicit handshake_alarm(caf::weak_actor_ptr self) : self_(std::move(self)) {
    // nop
  }

  /// Records `why` and wakes the connect.
  void ring(alarm_reason why) {
    reasons_.fetch_or(why);
    {
      std::lock_guard<std::mutex> guard{mtx_};
    }
    cv_.notify_all();
    auto awaited = awaited_.load();
    if (awaited == 0)
      return;
    if (auto self = caf::actor_cast<caf::strong_actor_ptr>(self_))
      self->enqueue(caf::make_mailbox_element(
                      nullptr, caf::message_id{awaited},
                      {},
                      caf::make_error(errc::handshake_failed,
                                      "the handshake was interrupted")),
                    nullptr);
  }

  /// Returns whether `why` happened.
  bool has(alarm_reason why) const {
    return (reasons_.load() & why) != 0;
  }

  /// Returns whether anything happened.
  bool rang() const {
    return reasons_.load() != 0;
  }

  /// The connect waits for the response `rid` from now on.
  void await(caf::message_id rid) {
    awaited_.store(rid.integer_value());
  }

  /// Blocks until a link is made or `deadline` passes; returns whether one
  /// was made.
  bool wait_link(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> guard{mtx_};
    return cv_.wait_until(guard, deadline, [this] { return has(link_made); });
  }

private:
  caf::weak_actor_ptr self_;
  std::atomic<unsigned> reasons_{0};
  std::atomic<uint64_t> awaited_{0};
  std::mutex mtx_;
  std::condition_variable cv_;
};

} // namespace

caf::expected<std::shared_ptr<link_state>>
node_impl::connect(const std::string& host, uint16_t port) {
  auto address = host + ":" + std::to_string(port);
  if (auto existing = links_.find_by_address(address))
    return existing;
  // The proxy CAF killed when it lost the last connection: CAF's cache of
  // connections may hand it out once more until its middleman has seen it
  // die, which it learns from a down message of its own (a fresh proxy
  // compares equal to the dead one; their addresses differ, and holding
  // the dead one keeps its address from being reused meanwhile).
  caf::actor lost;
  auto is_lost = [&](const caf::actor& x) {
    return lost && caf::actor_cast<caf::abstract_actor*>(x)
                     == caf::actor_cast<caf::abstract_actor*>(lost);
  };
  for (int attempt = 0;; ++attempt) {
    auto peer_gateway = dial(host, port);
    // How long the middleman takes to see the proxy die depends on the load
    // of the machine: ask again until it hands out a fresh one, within the
    // handshake timeout.
    auto fresh_by = std::chrono::steady_clock::now() + handshake_timeout;
    while (peer_gateway && is_lost(*peer_gateway)
           && std::chrono::steady_clock::now() < fresh_by) {
      std::this_thread::sleep_for(std::chrono::milliseconds{1});
      peer_gateway = dial(host, port);
    }
    if (!peer_gateway && peer_gateway.error().category() == caf::atom("ferry_fw"))
      return std::move(peer_gateway.error());
    if (!peer_gateway)
      return caf::make_error(errc::connect_failed,
                             "cannot connect to " + address + ": "
                               + render(peer_gateway.error()));
    if (is_lost(*peer_gateway))
      return caf::make_error(errc::connect_failed,
                             "cannot connect to " + address
                               + ": CAF kept handing out the connection it "
                                 "had closed for "
                               + std::to_string(handshake_timeout.count())
                               + " s; retry");
    auto peer = peer_gateway->node();
    if (auto existing = links_.find(peer)) {
      links_.note_address(address, peer);
      return existing;
    }
    // After a lost connection, the lower node connects once more.
    auto may_retry = attempt == 0 && sys_.node() < peer;
    auto outcome = handshake(address, *peer_gateway, may_retry);
    if (outcome.retry && attempt < max_connect_attempts - 1) {
      lost = *peer_gateway;
      continue;
    }
    if (outcome.retry)
      return caf::make_error(errc::connect_failed,
                             "cannot connect to " + address + ": CAF handed "
                             "out a closed connection "
                               + std::to_string(max_connect_attempts)
                               + " times; retry");
    if (!outcome.link)
      return std::move(outcome.error);
    links_.note_address(address, peer);
    return std::move(outcome.link);
  }
}

node_impl::handshake_outcome
node_impl::handshake(const std::string& address, const caf::actor& gateway,
                     bool may_retry) {
  auto peer = gateway.node();
  auto deadline = std::chrono::steady_clock::now() + handshake_timeout;
  caf::scoped_actor self{sys_};
  auto alarm = std::make_shared<handshake_alarm>(
    caf::actor_cast<caf::weak_actor_ptr>(self->ctrl()));
  struct watch_guard {
    link_table& links;
    uint64_t key;
    ~watch_guard() { links.unwatch(key); }
  } watch{links_, links_.watch(peer, [alarm] { alarm->ring(link_made); })};
  // Fires at once when the proxy is dead already.
  caf::actor_cast<caf::abstract_actor*>(gateway)->attach_functor(
    [alarm](const caf::error&) { alarm->ring(connection_lost); });
  // Dead before the handshake began: CAF's cache of connections handed out
  // the proxy of a connection it had closed (connect() explains). No peer is
  // connecting to this node through it, so this node asks again whichever
  // node's id is lower.
  if (alarm->has(connection_lost) && !alarm->has(link_made))
    return {nullptr, caf::none, true};
  // Sends `msg` and waits for its answer, unless the alarm rings.
  auto ask = [&](auto msg, auto on_answer) -> caf::error {
    auto handle = self->request(gateway, handshake_timeout, std::move(msg));
    alarm->await(handle.id());
    if (alarm->rang())
      return caf::make_error(errc::handshake_failed,
                             "the handshake was interrupted");
    caf::error failure;
    handle.receive(on_answer, [&](caf::error& err) { failure = err; });
    return failure;
  };
  // What ends the handshake early: a link the peer's hello made, or CAF's
  // lost connection (then retry, wait for the peer's link, or fail).
  auto settle = [&](caf::error failure) -> handshake_outcome {
    if (alarm->has(connection_lost) && !alarm->has(link_made)) {
      if (may_retry)
        return {nullptr, caf::none, true};
      alarm->wait_link(deadline);
    }
    if (alarm->has(link_made))
      if (auto link = links_.find(peer); link && !link->is_down())
        return {link, caf::none, false};
    if (alarm->has(connection_lost))
      failure = caf::make_error(
        errc::handshake_failed,
        "the connection to " + address
          + " was lost during the handshake (CAF closed it), and node "
          + caf::to_string(peer) + " made no link to this node meanwhile");
    return {nullptr, std::move(failure), false};
  };
  std::string peer_name;
  auto failure = ask(identify{}, [&](std::string& name) {
    peer_name = std::move(name);
  });
  if (failure || alarm->rang()) {
    auto outcome = settle(std::move(failure));
    if (outcome.error && outcome.error.category() != caf::atom("ferry_fw"))
      outcome.error = caf::make_error(errc::handshake_failed,
                                      "node at " + address
                                        + " did not identify itself: "
                                        + render(outcome.error));
    return outcome;
  }
  // On a TLS node the peer's certificate must name it.
  if (auto err = check_identity(peer, peer_name))
    return {nullptr, std::move(err), false};
  auto& cfg = cfg_.links.count(peer_name) != 0 ? cfg_.links.at(peer_name)
                                                : cfg_.link_for(address);
  auto offer = make_hello(cfg);
  offer.link_token = links_.inbound_token(peer);
  // Offered to every peer: only the answer tells whether it shares the
  // store; the ring goes (name and memory) when no lane uses it.
  auto lane = offer_lane(cfg);
  if (lane)
    offer.lane = lane->name();
  // From here on the peer may make its side and send before this node has
  // made its own: hold what it sends until then.
  early_.expect(peer);
  struct early_guard {
    node_impl& node;
    caf::node_id peer;
    ~early_guard() { node.release_early(peer); }
  } early{*this, peer};
  hello reply;
  failure = ask(offer, [&](hello& x) { reply = std::move(x); });
  if (failure || alarm->rang()) {
    auto outcome = settle(std::move(failure));
    // The peer's hello made the link: the peer may write into the ring
    // offered here (node/lanes.cpp).
    keep_offered_lane(outcome.link, lane, gateway, peer_name, cfg);
    if (outcome.error && outcome.error.category() != caf::atom("ferry_fw"))
      outcome.error = caf::make_error(errc::handshake_failed,
                                      "handshake with node " + peer_name
                                        + " at " + address + " failed: "
                                        + render(outcome.error));
    return outcome;
  }
  // The peer accepted; build this side from its answer.
  reply.node_name = peer_name;
  auto accepted = accept(reply, &cfg, &lane);
  if (!accepted)
    return {nullptr, std::move(accepted.error()), false};
  auto link = links_.find(peer);
  if (!link)
    return {nullptr,
            caf::make_error(errc::link_down,
                            "the link to " + address + " went down at once"),
            false};
  link->set_default_actor(reply.default_actor);
  return {link, caf::none, false};
}

void node_impl::release_early(const caf::node_id& peer) {
  auto linked = find_link(peer) != nullptr;
  auto* gw = static_cast<gateway*>(caf::actor_cast<caf::abstract_actor*>(
    gateway_));
  early_arrivals::deliver_fn deliver;
  if (linked)
    deliver = [gw](caf::mailbox_element_ptr x) { gw->replay(std::move(x)); };
  auto dropped = early_.release(peer, deliver);
  if (!linked && dropped > 0)
    log_unlinked("dropped " + std::to_string(dropped) + " messages from node "
                 + caf::to_string(peer)
                 + " that came while this node's handshake with it was under "
                   "way, which then failed");
}

} // namespace ferry::detail
