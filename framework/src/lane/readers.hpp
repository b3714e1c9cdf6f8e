// readers: the threads that read a node's incoming same-host lanes.
//
// Each link that receives through a lane (lane/ring.hpp) has one thread
// here. It takes the ring's records in order, reads each as the CAF
// message the peer's outbox wrote (ferry's wire types, with CAF's binary
// format, as BASP would carry them) and hands it to `deliver`, which
// enqueues it to the node's gateway in the peer gateway's name: from there
// on a message takes the same way as one CAF's middleman read. A record
// that does not read as a message is reported to `refused` and dropped,
// as CAF drops a message it cannot deserialize; when the ring closes
// (either side) or the peer breaks it, `ended` hears why once and the
// thread ends. The thread also drains its link's lane backlog
// (link/outbox.hpp): what it sent while the peer's ring was full.
//
// Ownership: the node owns its `readers`; a link keeps the ring it reads
// to close it when it goes down. `stop_all` (and the destructor) closes
// every ring and joins every thread; the node calls it before its actor
// system stops, so no thread outlives the actors it delivers to.
//
// Thread-safety: `start` and `stop_all` may be called from any thread.
#pragma once

#include <caf/actor_system.hpp>
#include <caf/error.hpp>
#include <caf/message.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "lane/ring.hpp"

namespace ferry::detail::lane {

/// Returns whether the calling thread is a lane reader.
bool on_reader_thread() noexcept;

class readers {
public:
  using deliver_fn = std::function<void(caf::message)>;
  using refused_fn = std::function<void(const caf::error&)>;
  /// Called once when the thread ends: with `none` when the ring was closed,
  /// with the error when the peer broke it.
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

  /// Starts a thread reading `in` (records up to `max_record` bytes) with
  /// `sys`'s types.
  void start(std::shared_ptr<ring> in, caf::actor_system& sys,
             uint64_t max_record, deliver_fn deliver, refused_fn refused,
             ended_fn ended, backlog out);

  /// Closes every ring and joins every thread.
  void stop_all();

private:
  struct entry {
    std::shared_ptr<ring> in;
    std::shared_ptr<std::atomic<bool>> done;
    std::thread thread;
  };

  /// Joins the threads that ended (requires `mtx_`).
  void reap_locked();

  std::mutex mtx_;
  std::vector<entry> entries_;
};

} // namespace ferry::detail::lane
