// pending_requests: the responses a link may deliver (see
// link/pending_requests.hpp).
#include "link/pending_requests.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_control_block.hpp>

#include <algorithm>

namespace ferry::detail {

uint64_t request_key(caf::message_id mid) {
  return mid.integer_value() & caf::message_id::request_id_mask;
}

pending_requests::pending_requests(uint64_t capacity)
  : capacity_(std::max(capacity, uint64_t{1})) {
  // nop
}

pending_requests::added
pending_requests::add(const caf::strong_actor_ptr& requester,
                      caf::message_id mid) {
  added result;
  lock_guard guard{mtx_};
  if (closed_)
    return result;
  result.recorded = true;
  auto key = std::make_pair(requester->id(), request_key(mid));
  auto seq = next_seq_++;
  slot x{{caf::actor_cast<caf::weak_actor_ptr>(requester), mid}, seq};
  if (spare_.empty()) {
    pending_.insert_or_assign(key, std::move(x));
  } else {
    spare_.key() = key;
    spare_.mapped() = std::move(x);
    auto inserted = pending_.insert(std::move(spare_));
    if (!inserted.inserted) {
      // The key was there already (CAF reused a request id): the newer
      // request takes its place.
      inserted.position->second = std::move(inserted.node.mapped());
      spare_ = std::move(inserted.node);
    }
  }
  order_.emplace_back(seq, key);
  trim_order();
  if (pending_.size() > capacity_)
    result.evicted = evict_oldest();
  // Entries of records answered out of order stay behind the front; once
  // they outnumber the records, the order is rebuilt from the records.
  if (order_.size() > 2 * pending_.size() + 64) {
    order_.clear();
    for (auto& [k, s] : pending_)
      order_.emplace_back(s.seq, k);
    std::sort(order_.begin(), order_.end());
  }
  return result;
}

void pending_requests::trim_order() {
  while (!order_.empty()) {
    auto& [seq, key] = order_.front();
    auto i = pending_.find(key);
    if (i != pending_.end() && i->second.seq == seq)
      return;
    order_.pop_front();
  }
}

pending_requests::entry pending_requests::evict_oldest() {
  // The front names a record: trim_order ran after the last change, and
  // the table holds more than one record.
  auto node = pending_.extract(order_.front().second);
  order_.pop_front();
  trim_order();
  return std::move(node.mapped().request);
}

bool pending_requests::answered(uint64_t requester, caf::message_id mid) {
  map_type::node_type node;
  lock_guard guard{mtx_};
  node = pending_.extract(std::make_pair(requester, request_key(mid)));
  if (node.empty())
    return false;
  if (spare_.empty()) {
    // Keep the node, without the requester's handle (released here, under
    // the lock: a weak handle's release runs no actor's cleanup).
    node.mapped() = slot{};
    spare_ = std::move(node);
  }
  return true;
}

bool pending_requests::claim_held_answer(uint64_t requester,
                                         caf::message_id mid) {
  if (!mid.is_response())
    return false;
  lock_guard guard{mtx_};
  auto i = pending_.find(std::make_pair(requester, request_key(mid)));
  return i != pending_.end() && !std::exchange(i->second.answer_held, true);
}

void pending_requests::forget(uint64_t requester) {
  lock_guard guard{mtx_};
  pending_.erase(
    pending_.lower_bound(std::make_pair(requester, uint64_t{0})),
    pending_.lower_bound(std::make_pair(requester + 1, uint64_t{0})));
  trim_order();
}

std::vector<pending_requests::entry> pending_requests::close() {
  map_type taken;
  {
    lock_guard guard{mtx_};
    closed_ = true;
    taken.swap(pending_);
    order_.clear();
  }
  std::vector<entry> result;
  result.reserve(taken.size());
  for (auto& [key, x] : taken)
    result.push_back(std::move(x.request));
  return result;
}

size_t pending_requests::size() const {
  lock_guard guard{mtx_};
  return pending_.size();
}

} // namespace ferry::detail
