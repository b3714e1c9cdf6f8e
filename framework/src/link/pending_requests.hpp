// pending_requests: requests this node sent over a link, not answered yet.
//
// Each entry is (local requester, request id). When the link goes down,
// every entry gets a `link_down` error response (`close`), so no requester
// waits for its timeout. An entry leaves when its response arrives
// (delivered or not), or when its requester terminates: a request the peer
// never answers (a response promise dropped there, which CAF 0.17 does not
// report) would otherwise stay for the link's lifetime.
//
// Responses to these requests pass the link's held limits (this node's
// actors asked for them), but only one per request: a peer cannot send
// copies of a response to get around the limits.
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
#include <map>
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

  /// Records a request with id `mid` sent by the actor `requester`.
  /// Returns false, recording nothing, once the table is closed.
  [[nodiscard]] bool add(const caf::strong_actor_ptr& requester,
                         caf::message_id mid);

  /// The response `mid` for actor `requester` arrived (delivered or not).
  void answered(uint64_t requester, caf::message_id mid);

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

private:
  struct slot {
    entry request;
    /// A response was taken beyond the held limits.
    bool answer_held = false;
  };

  mutable mutex mtx_;
  bool closed_ FERRY_GUARDED_BY(mtx_) = false;
  /// By (requester id, request key).
  using map_type = std::map<std::pair<uint64_t, uint64_t>, slot>;
  map_type pending_ FERRY_GUARDED_BY(mtx_);
  /// The node of the last answered request, emptied, for the next request
  /// (one allocation per request less).
  map_type::node_type spare_ FERRY_GUARDED_BY(mtx_);
};

} // namespace ferry::detail
