// handshake: what makes a connection a link (docs/wire-format.md,
// "Handshake").
//
// Every new connection, accepted or opened, gets a `handshake` as its
// handler. After the preface each side sends its `intro` (protocol version,
// node id, name, host and store). On the peer's intro each side checks the
// version (a mismatch is refused naming both), that the peer is not this
// node, and the transport: on a TLS connection the name must be one the
// peer's certificate was issued for (the certificate of *this* connection);
// a TLS node takes a plain connection only from a peer its link config
// allows plain (`link_config::plain`). Then each side sends its `hello` for
// the link config it chose by the peer's name (or, connecting, the
// address): families, window, types, and the ring it offers for a
// same-host lane when the two share the store. On the peer's hello each
// side works out the families of both directions the same way and refuses
// a link without a family in common, naming both lists.
//
// One node of the pair decides: the one with the lower node id (both know
// both ids). For every connection between them it makes the link, unless
// one to that node exists already, and sends `welcome`; a connection that
// finds a link is refused with `already_linked`. The other node makes its
// side of the link when the welcome arrives, and sends nothing on the
// connection before. So two nodes that connect to each other at once keep
// exactly one connection, the one the deciding node welcomed first, and
// nothing is sent on the other: nothing is lost. A connect whose connection
// was refused `already_linked` waits for the link the other connection
// makes (node/connect.cpp).
//
// A refusal is sent as a `refuse` frame with the reason, and the connection
// closes; the refusing node logs TLS refusals ("TLS: ..."). A connection
// that does not finish its handshake within the handshake timeout closes
// (transport/connection.hpp).
//
// Thread-safety: a handshake lives on its connection's I/O thread;
// `connect_wait` is the one part shared with the thread waiting in
// `connect`.
#pragma once

#include "lane/ring.hpp"
#include "link/link_state.hpp"
#include "thread_safety.hpp"
#include "transport/connection.hpp"
#include "wire/control.hpp"

#include "ferry/link_config.hpp"

#include <caf/error.hpp>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ferry::detail {

class node_impl;

/// How an outgoing connection's handshake ended, for the thread waiting in
/// `connect`.
struct connect_wait {
  struct outcome {
    /// The link made (or found).
    std::shared_ptr<link_state> link;
    /// Why there is none.
    caf::error error;
    /// The peer's node id, once its intro came (for `already_linked`).
    uint64_t peer = 0;
  };

  /// Ends the wait with `x` (the first call counts).
  void finish(outcome x);

  /// Waits for the outcome until `deadline`; nothing when it passed.
  std::optional<outcome> wait(std::chrono::steady_clock::time_point deadline);

private:
  mutex mtx_;
  std::condition_variable cv_;
  std::optional<outcome> result_ FERRY_GUARDED_BY(mtx_);
};

class handshake final : public net::connection::handler {
public:
  /// A handshake on a connection this node accepted (`waiter` null) or
  /// opened to `address` ("host:port").
  handshake(node_impl& node, std::string address,
            std::shared_ptr<connect_wait> waiter);

  void on_open(net::connection& conn) override;

  void on_closed(net::connection& conn, const caf::error& why) override;

  uint64_t max_body(wire::frame_type type) const override;

  caf::error on_frame(wire::frame_type type,
                      std::span<const std::byte> body) override;

  caf::error on_message(wire_message&& msg) override;

  net::chunk_place chunk_landing(uint64_t request, uint64_t length) override;

  caf::error on_chunk(uint64_t request, wire_bytes data, bool landed) override;

  import_landing* imports() override;

private:
  enum class step : uint8_t { intro, hello, welcome, linked };

  caf::error on_intro(std::span<const std::byte> body);
  caf::error on_hello(std::span<const std::byte> body);
  caf::error on_welcome();
  caf::error on_refuse(std::span<const std::byte> body);

  /// Checks the transport of the peer named in its intro (TLS name, plain
  /// links); returns the refusal, if any.
  caf::error check_transport(net::connection& conn);

  /// Makes the link (the deciding node before its welcome, the other on
  /// the welcome).
  caf::error link_up(bool welcome);

  /// Sends `why` to the peer, closes the connection and reports it.
  caf::error refuse_with(caf::error why);

  /// Reports the end to a waiting connect (once).
  void report(connect_wait::outcome x);

  /// Returns "node 'name' at address" (or "the peer at address").
  std::string who() const;

  node_impl& node_;
  const std::string address_;
  std::shared_ptr<connect_wait> waiter_;
  std::weak_ptr<net::connection> conn_;
  step step_ = step::intro;
  intro peer_intro_;
  hello peer_hello_;
  link_config cfg_;
  std::vector<std::string> send_families_;
  std::optional<lane::ring> offered_;
  /// The link's dispatcher, once linked: what arrives after the frame that
  /// made the link goes there.
  std::shared_ptr<net::connection::handler> next_;
  bool reported_ = false;
  /// Whether this node refused the connection (and said why).
  bool refused_ = false;
};

} // namespace ferry::detail
