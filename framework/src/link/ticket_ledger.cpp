// ticket_ledger: store tickets in transit (see link/ticket_ledger.hpp).
#include "link/ticket_ledger.hpp"

namespace ferry::detail {

namespace {

/// Whether `ticket` belongs to a spilled frame of `msg`.
bool spilled(const wire_message& msg, const store::transfer_ticket& ticket) {
  for (auto& element : msg.elements)
    for (auto& frame : element.frames)
      if (static_cast<frame_kind>(frame.kind) == frame_kind::store_object &&
          frame.ticket == ticket.id)
        return true;
  return false;
}

} // namespace

bool ticket_ledger::record(uint64_t seq,
                           const std::vector<store::transfer_ticket>& tickets,
                           const wire_message& msg) {
  lock_guard guard{mtx_};
  if (closed_)
    return false;
  for (auto& ticket : tickets)
    entries_.push_back({seq, ticket, !spilled(msg, ticket)});
  return true;
}

std::vector<store::transfer_ticket> ticket_ledger::taken(uint64_t delivered) {
  std::vector<store::transfer_ticket> leftover;
  lock_guard guard{mtx_};
  while (!entries_.empty() && entries_.front().seq < delivered) {
    if (entries_.front().in_value)
      leftover.push_back(entries_.front().ticket);
    entries_.pop_front();
  }
  return leftover;
}

std::vector<store::transfer_ticket> ticket_ledger::close() {
  std::vector<store::transfer_ticket> result;
  lock_guard guard{mtx_};
  closed_ = true;
  result.reserve(entries_.size());
  for (auto& x : entries_)
    result.push_back(x.ticket);
  entries_.clear();
  return result;
}

size_t ticket_ledger::size() const {
  lock_guard guard{mtx_};
  return entries_.size();
}

} // namespace ferry::detail
