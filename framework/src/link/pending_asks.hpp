// pending_asks: this node's requests to the peer that wait for an answer.
//
// A link's requests (a lookup, a spawn, a chunk or relay request) go to the
// peer on the link's own way, each with a request id, and the answer comes
// back on the same link naming it (docs/wire-format.md, "Requests"). An
// answer is matched here and nowhere else: no other link, and no other
// connection of the peer, can answer this link's requests. Ids come from
// one counter for the process, so an id names one request of one link.
//
// A chunk request names where its bytes land (a part of the frame being
// pulled, transfer/landing_buffer.hpp): the reader of the answer copies them
// there straight from the socket (`place`), when the answer holds exactly
// the bytes asked for.
//
// Every ask ends once: answered, failed (`fail_all` when the link goes
// down), or forgotten by its asker (`forget`, after its timeout). Callbacks
// run on the thread that ends the ask, without the lock.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the table.
#pragma once

#include "thread_safety.hpp"
#include "transfer/landing_buffer.hpp"
#include "transport/frame_reader.hpp"
#include "wire/bytes.hpp"

#include <caf/error.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

namespace ferry::detail {

class pending_asks {
public:
  /// What came back.
  struct answer {
    /// Set when the peer answered with an error, or the ask failed.
    caf::error error;
    /// The actor id of a lookup or spawn answer.
    uint64_t actor = 0;
    /// A chunk's bytes when they did not land in place.
    wire_bytes data;
    /// Whether a chunk's bytes landed in place.
    bool landed = false;
  };

  using callback = std::function<void(answer)>;

  /// What an ask waits for besides a `failed` answer.
  enum class kind : uint8_t {
    /// An `actor_id` (lookups and spawns).
    actor,
    /// A `chunk` (chunk and relay requests).
    chunk,
  };

  /// Records an ask of `k`; returns its request id (never 0), or 0 when the
  /// link is down (`fail_all` ran): then `cb` heard why, on this thread,
  /// and the caller sends nothing.
  uint64_t add(kind k, callback cb);

  /// Records a chunk ask whose `length` bytes land at `offset` of `target`.
  uint64_t add(callback cb, std::shared_ptr<landing_buffer> target,
               uint64_t offset, uint64_t length);

  /// Returns where the `length` bytes answering `id` land (empty when `id`
  /// is not a chunk ask of that length).
  net::chunk_place place(uint64_t id, uint64_t length);

  /// Ends ask `id` with `x`, an answer of `k` (an `actor_id` or a `chunk`)
  /// or, with `failed`, a `failed` answer; an answer of the other kind
  /// ends the ask with `decode_failed` naming both. Returns false when no
  /// ask has that id (an answer to nothing: late, or invented).
  bool complete(uint64_t id, answer x, kind k, bool failed = false);

  /// Forgets ask `id` without calling its callback.
  void forget(uint64_t id);

  /// Fails every ask with `why` and takes no more.
  void fail_all(const caf::error& why);

  /// Returns the asks waiting.
  size_t size() const;

private:
  struct entry {
    kind k = kind::actor;
    callback cb;
    std::shared_ptr<landing_buffer> target;
    uint64_t offset = 0;
    uint64_t length = 0;
  };

  /// Records `x` under a new id (0, `x.cb` failed at once, when closed).
  uint64_t add_entry(entry x);

  mutable mutex mtx_;
  std::unordered_map<uint64_t, entry> asks_ FERRY_GUARDED_BY(mtx_);
  bool closed_ FERRY_GUARDED_BY(mtx_) = false;
  /// Why the asks failed (`fail_all`): what later asks hear.
  caf::error closed_why_ FERRY_GUARDED_BY(mtx_);
};

} // namespace ferry::detail
