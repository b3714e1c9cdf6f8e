// delivery_batch: the messages of one wire batch enter their mailboxes
// together, after all of them are decoded.
//
// A receiving thread (a connection's I/O thread, a lane reader) that
// decodes a batch and hands each message to its actor at once wakes the
// actor for nearly every message: decoding is slower than a small message's
// handler, so the actor drains its mailbox, blocks, and the next message
// wakes it again (a futex wake, and on two cores usually a preemption of
// the decoding thread). Inside a `delivery_batch` scope `post` keeps the
// elements instead, and the scope's end enqueues them in the order they were
// posted: one wake per batch, while the decoder moves on to the next.
//
// Order: every message of the scope is posted here, delivered or refused
// with an error response alike, so two messages for one actor keep their
// order. A caller that lets a message go elsewhere first (the puller, which
// delivers on its own thread) calls `flush` before. Nested scopes join the
// outermost one.
//
// Thread-safety: the scope is thread-local; `post` outside a scope enqueues
// at once.
#pragma once

#include "thread_role.hpp"

#include <caf/actor_control_block.hpp>
#include <caf/execution_unit.hpp>
#include <caf/mailbox_element.hpp>

namespace ferry::detail {

class delivery_batch {
public:
  delivery_batch();

  delivery_batch(const delivery_batch&) = delete;
  delivery_batch& operator=(const delivery_batch&) = delete;

  /// Enqueues what the scope holds, unless an outer scope holds it.
  ~delivery_batch();

  /// Enqueues `element` at `target` now, or at the end of the thread's
  /// outermost scope.
  static void post(const caf::strong_actor_ptr& target,
                   caf::mailbox_element_ptr element, caf::execution_unit* host);

  /// Enqueues what the thread's scope holds so far.
  static void flush();

  /// Returns whether this thread is inside a scope, its final flush
  /// included.
  static bool open() noexcept;

private:
  /// The thread delivers until the scope's final flush is done: an enqueue
  /// there may reach a proxy that sends on another link, which must not
  /// wait for credit (thread_role.hpp).
  thread_role::delivering role_;
  bool outer_;
};

} // namespace ferry::detail
