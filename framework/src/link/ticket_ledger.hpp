// ticket_ledger: store tickets of messages sent and not yet taken by the
// peer.
//
// Between nodes that share the host store, a message carries store tickets:
// one per spilled frame, and one per handle inside the encoded value. The
// peer redeems each ticket when it decodes the message, or cancels the
// frames' tickets when it refuses it. Until the peer's credit says it has
// taken the message (`credit::delivered`), the ledger keeps its tickets:
// when the link dies first, they are cancelled (`close`), so no object
// stays pinned by a message that never arrived. A handle's ticket inside a
// message the peer refused before decoding is invisible to the peer; the
// ledger cancels it when the peer's credit reports the message taken.
//
// Entries are appended in sequence order (by the outbox, under its lock).
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the ledger.
#pragma once

#include "thread_safety.hpp"
#include "wire/message.hpp"

#include "ferry/store/object_ref.hpp"

#include <cstdint>
#include <deque>
#include <vector>

namespace ferry::detail {

class ticket_ledger {
public:
  /// Keeps `tickets` of the message `msg` with sequence number `seq` (the
  /// largest so far). Returns false, keeping nothing, once closed: the
  /// caller cancels them.
  [[nodiscard]] bool record(uint64_t seq,
                            const std::vector<store::transfer_ticket>& tickets,
                            const wire_message& msg);

  /// The peer took every message below `delivered`: forgets their tickets
  /// and returns those of handles inside values, for the caller to cancel
  /// (a redeemed one is gone, and ticket ids are never reused, so that
  /// cancels nothing else).
  std::vector<store::transfer_ticket> taken(uint64_t delivered);

  /// Closes the ledger and returns every ticket in it, for the caller to
  /// cancel.
  std::vector<store::transfer_ticket> close();

  /// Returns the number of tickets kept.
  size_t size() const;

private:
  struct entry {
    /// The message's place in the order of posted messages.
    uint64_t seq = 0;
    store::transfer_ticket ticket;
    /// A handle's ticket inside the encoded value (not a frame's).
    bool in_value = false;
  };

  mutable mutex mtx_;
  bool closed_ FERRY_GUARDED_BY(mtx_) = false;
  std::deque<entry> entries_ FERRY_GUARDED_BY(mtx_);
};

} // namespace ferry::detail
