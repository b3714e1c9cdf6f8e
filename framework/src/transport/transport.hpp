// transport: the way a link's frames leave this node.
//
// A link sends every frame it has for its peer (user messages, batches,
// control frames, requests and answers) through one transport, in order
// (link/outbox.hpp numbers and orders them; the transport keeps that
// order). Two implementations: a TCP connection of ferry's own
// (transport/connection.hpp), plain or TLS, between hosts and wherever no
// lane can be had; and a same-host lane (lane/lane_transport.hpp), a ring
// in shared memory the peer reads. Above this interface a message's way is
// the same for both.
//
// What comes in takes the way back: the connection's reader, or the lane's
// reader thread, hands each frame to the node's dispatcher for the link
// (node/dispatch.hpp).
//
// Thread-safety: `send` may be called from any thread; calls are ordered by
// the caller (the link's outbox holds its lock around them). `close` may be
// called from any thread, also while a `send` runs.
#pragma once

#include "wire/out_frame.hpp"

#include <caf/error.hpp>

#include <cstdint>

namespace ferry::detail {

class transport {
public:
  virtual ~transport();

  /// Sends `frame` after every frame sent before it, without waiting: what
  /// the socket or the ring does not take now is kept and written later (a
  /// connection's I/O thread writes its queue; see `await_room` for a
  /// lane). After `close`, frames are dropped.
  virtual void send(wire::out_frame&& frame) = 0;

  /// Waits until what this transport keeps has gone and it has room for
  /// `bytes` more, or it closed: a lane's backpressure, which the link
  /// applies to threads that may wait (`thread_role::may_wait_for_room`) with no lock held. A
  /// connection never waits here (its queue is bounded by the link's credit
  /// window).
  virtual void await_room(uint64_t bytes);

  /// Stops sending. With `drain`, what was sent before goes out first
  /// (bounded by the transport's linger) and the peer sees an orderly end;
  /// without, the way closes at once.
  virtual void close(bool drain) = 0;

  /// Ends at once: the link hears `why` as the reason it went down (a
  /// transport that found its way broken).
  virtual void fail(caf::error why) = 0;

  /// Returns whether this transport is a same-host lane.
  virtual bool is_lane() const noexcept = 0;

  /// Returns whether the link's TCP connection runs TLS (for a lane: the
  /// connection beside it).
  virtual bool is_tls() const noexcept = 0;
};

} // namespace ferry::detail
