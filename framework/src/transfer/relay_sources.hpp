// relay_sources: the store objects a node relays, by relay key.
//
// The relaying side of wire/relay_hint.hpp, node-wide: a pull arrives on
// the link to the owner, the requests for its chunks on links to other
// receivers. Each puller opens a source for every store object it pulls
// with a relay key, reports its chunks and its end to it
// (transfer/relay_source.hpp), and closes it when the pull fails. The dispatcher
// hands each `relay_request` to `serve`.
//
// A request may come before this node opened the key: the owner sent the
// object here first, but the receiver after this one asked before this
// node's own message arrived or its pull began. Such a request waits up to
// `grace` for the key (at most `max_waiting` of them), then is answered
// with an error, and the asking node pulls that chunk from the owner. A key
// this node had and let go (among the last `max_gone`) is answered at once.
//
// A sealed object's source stays for `linger` after its last use, so
// receivers a little behind still find it while this host holds the object
// (a source keeps no object alive, see transfer/relay_source.hpp); `sweep` (the
// node's timer) then forgets it.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the table, and requests are answered and sources dropped
// after it. The timer is set before the node makes links.
#pragma once

#include "thread_safety.hpp"
#include "transfer/relay_registry.hpp"
#include "transfer/relay_source.hpp"

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace ferry::detail {

class relay_sources final : public relay_registry {
public:
  /// How long a sealed object's source stays after its last use by
  /// default.
  static constexpr auto default_linger = std::chrono::seconds{5};

  /// How long a request for a key not opened yet waits by default.
  static constexpr auto default_grace = std::chrono::milliseconds{200};

  /// Requests waiting for keys not opened yet, at most.
  static constexpr size_t max_waiting = 256;

  /// Keys let go that are remembered (and refused at once), at most.
  static constexpr size_t max_gone = 1024;

  /// Relays for node `node_name`, timing lingers and graces on `time`
  /// (which must outlive the table and its sources).
  explicit relay_sources(std::string node_name,
                         clock::duration linger = default_linger,
                         clock::duration grace = default_grace,
                         const clock& time = clock::steady());

  /// Sets what wakes `expire` after a delay (the node's sweeper); without
  /// it, waiting requests expire only when `expire` is called.
  void set_timer(std::function<void(clock::duration)> timer);

  /// Opens the source of the object with relay key `key` (its bytes
  /// `bytes`, landing in `buffer`, pulled from node `owner`) and hands it
  /// the requests waiting for the key; null when this node relays that
  /// key already (it pulls the object twice: the first pull serves).
  std::shared_ptr<relay_source> open(uint64_t key,
                                     std::span<const std::byte> bytes,
                                     std::shared_ptr<landing_buffer> buffer,
                                     const std::string& owner,
                                     uint64_t max_chunk) override;

  /// The pull of `source` (key `key`) failed or stopped: answers its
  /// waiting requests with `why` and forgets it, unless it is sealed.
  void close(uint64_t key, const std::shared_ptr<relay_source>& source,
             const caf::error& why) override;

  /// Answers node `requester`'s `req` (see relay_source::serve), or keeps
  /// it waiting for its key.
  void serve(const relay_request& req, const std::string& requester,
             relay_source::reply_fn reply) override;

  /// Answers the requests that waited `grace` for their key.
  void expire();

  /// Forgets sealed objects unused for `linger` (the node's sweeper calls
  /// this every half linger).
  void sweep();

  /// Forgets every source and answers every waiting request (the node
  /// shuts down).
  void clear();

  clock::duration linger() const { return linger_; }

  /// Returns the number of sources (for tests and metrics).
  size_t size() const;

private:
  struct waiting {
    relay_request req;
    std::string requester;
    relay_source::reply_fn reply;
    clock::time_point deadline;
  };

  /// Forgets the sources `pred` selects, noting their keys as gone;
  /// returns them, to be dropped after the lock.
  template <class Pred>
  std::vector<std::shared_ptr<relay_source>> erase_locked(Pred pred)
    FERRY_REQUIRES(mtx_);

  /// Notes `key` as let go.
  void gone_locked(uint64_t key) FERRY_REQUIRES(mtx_);

  /// Answers `x` with the error for a key this node does not hold.
  void not_here(waiting& x) const;

  const std::string node_name_;
  const clock::duration linger_;
  const clock::duration grace_;
  const clock* clock_;
  mutable mutex mtx_;
  std::function<void(clock::duration)> timer_ FERRY_GUARDED_BY(mtx_);
  std::unordered_map<uint64_t, std::shared_ptr<relay_source>>
    sources_ FERRY_GUARDED_BY(mtx_);
  std::vector<waiting> waiting_ FERRY_GUARDED_BY(mtx_);
  std::deque<uint64_t> gone_ FERRY_GUARDED_BY(mtx_);
};

} // namespace ferry::detail
