// pull_queue: a link's incoming messages that wait for pulled frames.
//
// A message with frames to pull (cross host, link/puller.cpp) cannot be
// delivered when it arrives; neither can any message after it, or order
// would break. Such a message and every later one queue here until the
// link's puller has taken them all; a message that finds the queue idle and
// has nothing to pull is delivered at once by the thread that read it.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the queue.
#pragma once

#include "thread_safety.hpp"
#include "wire/message.hpp"

#include <caf/actor.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <utility>

namespace ferry::detail {

class pull_queue {
public:
  /// `spawn_puller` makes the actor that drains the queue (called once,
  /// when the first message queues).
  explicit pull_queue(std::function<caf::actor()> spawn_puller);

  /// What `push` did with a message.
  enum class outcome {
    /// Nothing queued and nothing to pull: deliver it now.
    deliver_now,
    /// Queued behind others; the puller is at work already.
    queued,
    /// Queued; wake the puller returned in `wake`.
    queued_wake,
  };

  /// Takes `msg` (`size`: its wire_size) unless it can be delivered now.
  outcome push(wire_message& msg, uint64_t size, caf::actor& wake);

  /// Returns the next queued message, or nothing (then the queue is idle).
  std::optional<std::pair<wire_message, uint64_t>> take();

  /// Drops what is queued and returns the puller (null if none was spawned)
  /// for the caller to stop.
  caf::actor close();

private:
  const std::function<caf::actor()> spawn_puller_;
  mutex mtx_;
  std::deque<std::pair<wire_message, uint64_t>> queue_ FERRY_GUARDED_BY(mtx_);
  bool draining_ FERRY_GUARDED_BY(mtx_) = false;
  caf::actor puller_ FERRY_GUARDED_BY(mtx_);
};

} // namespace ferry::detail
