// pending_requests: the responses a link may deliver.
//
// When an actor's request leaves on a link (to a proxy of the link's peer),
// the link records the pair (asking actor, request id) here; a response
// that arrives on the link is delivered only when it answers a recorded
// pair, and takes the record with it (`answered`). So a response comes
// only from the node the request was sent to, once: a peer cannot answer a
// request this node sent to another peer, one never asked, or one answered
// already (docs/security.md, "Who may answer a request").
//
// A record leaves when its response arrives (delivered or not), when its
// requester terminates (`forget`), or when the link goes down (`close`:
// every request still pending then gets a `link_down` error response, so
// no requester waits for its timeout). CAF 0.17 tells no proxy a request's
// timeout, nor a response promise dropped on the peer, so a request that is
// never answered would otherwise stay for its requester's lifetime: the
// table holds at most `capacity` records, and when it is full the oldest
// record goes to make room, its requester hearing `too_many_requests`
// (`add` returns it, the caller delivers the error).
//
// Responses to recorded requests pass the link's held limits (this node's
// actors asked for them), but only one per request (`claim_held_answer`).
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the table.
#pragma once

#include "thread_safety.hpp"

#include <caf/actor_addr.hpp>
#include <caf/fwd.hpp>
#include <caf/message_id.hpp>
#include <caf/weak_intrusive_ptr.hpp>

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace ferry::detail {

/// Returns the part of a request or response id that both share.
uint64_t request_key(caf::message_id mid);

class pending_requests {
public:
  /// A request waiting for its response.
  struct entry {
    caf::weak_actor_ptr requester;
    caf::message_id mid;
  };

  /// A table of at most `capacity` records (at least 1).
  explicit pending_requests(uint64_t capacity);

  /// What `add` did.
  struct added {
    /// False, recording nothing, once the table is closed.
    bool recorded = false;
    /// The oldest request, dropped to make room: its requester is to hear
    /// `too_many_requests`.
    std::optional<entry> evicted;
  };

  /// Records a request with id `mid` sent by the actor `requester`.
  [[nodiscard]] added add(const caf::strong_actor_ptr& requester,
                          caf::message_id mid);

  /// Takes the record the response `mid` for actor `requester` answers.
  /// Returns false when there is none: nothing of that requester and id
  /// was sent on this link, or it was answered, forgotten or dropped.
  [[nodiscard]] bool answered(uint64_t requester, caf::message_id mid);

  /// Returns whether `mid` answers a pending request of actor `requester`
  /// and is the first response to it taken beyond the held limits (and
  /// claims that place).
  bool claim_held_answer(uint64_t requester, caf::message_id mid);

  /// Forgets every request of actor `requester` (it terminated).
  void forget(uint64_t requester);

  /// Closes the table and returns every request still pending.
  std::vector<entry> close();

  /// Returns the number of requests pending.
  size_t size() const;

  /// Returns the most records the table holds.
  uint64_t capacity() const { return capacity_; }

private:
  using key_type = std::pair<uint64_t, uint64_t>;

  struct slot {
    entry request;
    /// When the request was recorded (`next_seq_` then).
    uint64_t seq = 0;
    /// A response was taken beyond the held limits.
    bool answer_held = false;
  };

  /// Drops from the front of `order_` what no record holds any more.
  void trim_order() FERRY_REQUIRES(mtx_);

  /// Removes the oldest record and returns it.
  entry evict_oldest() FERRY_REQUIRES(mtx_);

  const uint64_t capacity_;
  mutable mutex mtx_;
  bool closed_ FERRY_GUARDED_BY(mtx_) = false;
  /// By (requester id, request key).
  using map_type = std::map<key_type, slot>;
  map_type pending_ FERRY_GUARDED_BY(mtx_);
  /// Keys in the order they were recorded, with their `seq`; an entry
  /// whose record went (or holds another `seq`) is skipped and dropped
  /// when it reaches the front, and the whole is rebuilt when such
  /// entries outnumber the records.
  std::deque<std::pair<uint64_t, key_type>> order_ FERRY_GUARDED_BY(mtx_);
  uint64_t next_seq_ FERRY_GUARDED_BY(mtx_) = 0;
  /// The node of the last answered request, emptied, for the next request
  /// (one allocation per request less).
  map_type::node_type spare_ FERRY_GUARDED_BY(mtx_);
};

} // namespace ferry::detail
