// readers: the threads that read a node's incoming same-host lanes.
//
// Each link that receives through a lane (lane/ring.hpp) has one thread
// here. It takes the ring's records in order, each one frame the peer's
// link wrote (wire/frame.hpp), and hands it to `deliver`, which reads it
// with the same parser and dispatcher as a frame from the link's
// connection: from there on a message takes the same way. When `deliver`
// refuses a record (not a frame, or one the link does not take), when the
// ring closes (either side) and is empty, or when the peer breaks it,
// `ended` hears why once and the thread ends. The thread also drains its
// link's lane backlog (lane/lane_transport.hpp): what it sent while the
// peer's ring was full. A reader thread never waits for a peer
// (transport.hpp, `may_wait`).
//
// Ownership: the node owns its `readers`; a link keeps the ring it reads
// to close it when it goes down. `stop_all` (and the destructor) closes
// every ring and joins every thread; the node calls it before its actor
// system stops, so no thread outlives the actors it delivers to.
//
// Thread-safety: `start` and `stop_all` may be called from any thread.
#pragma once

#include <caf/error.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "lane/ring.hpp"
#include "thread_safety.hpp"

namespace ferry::detail::lane {

class readers {
public:
  /// Takes one record; an error ends the thread (and the link).
  using deliver_fn = std::function<caf::error(std::span<const std::byte>)>;
  /// Called once when the thread ends: with `none` when the ring was closed,
  /// with the error when the peer broke it or sent what is not a frame.
  using ended_fn = std::function<void(const caf::error&)>;

  readers() = default;
  readers(const readers&) = delete;
  readers& operator=(const readers&) = delete;
  ~readers();

  /// What the thread calls between records while `pending` is set: the
  /// link's outbox writes what it could not write from this thread.
  struct backlog {
    std::shared_ptr<std::atomic<bool>> pending;
    std::function<void()> drain;
  };

  /// Starts a thread reading `in` (records up to `max_record` bytes).
  void start(std::shared_ptr<ring> in, uint64_t max_record, deliver_fn deliver,
             ended_fn ended, backlog out);

  /// Closes every ring and joins every thread.
  void stop_all();

private:
  struct entry {
    std::shared_ptr<ring> in;
    std::shared_ptr<std::atomic<bool>> done;
    std::thread thread;
  };

  /// Joins the threads that ended.
  void reap_locked() FERRY_REQUIRES(mtx_);

  mutex mtx_;
  std::vector<entry> entries_ FERRY_GUARDED_BY(mtx_);
};

} // namespace ferry::detail::lane
