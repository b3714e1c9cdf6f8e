// pending_requests: requests waiting for their responses (see
// link/pending_requests.hpp).
#include "link/pending_requests.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_control_block.hpp>

namespace ferry::detail {

uint64_t request_key(caf::message_id mid) {
  return mid.integer_value() & caf::message_id::request_id_mask;
}

bool pending_requests::add(const caf::strong_actor_ptr& requester,
                           caf::message_id mid) {
  lock_guard guard{mtx_};
  if (closed_)
    return false;
  auto key = std::make_pair(requester->id(), request_key(mid));
  slot x{{caf::actor_cast<caf::weak_actor_ptr>(requester), mid}};
  if (spare_.empty()) {
    pending_.emplace(key, std::move(x));
    return true;
  }
  spare_.key() = key;
  spare_.mapped() = std::move(x);
  auto result = pending_.insert(std::move(spare_));
  if (!result.inserted)
    spare_ = std::move(result.node); // the key was there already: keep it
  return true;
}

void pending_requests::answered(uint64_t requester, caf::message_id mid) {
  map_type::node_type node;
  {
    lock_guard guard{mtx_};
    node = pending_.extract(std::make_pair(requester, request_key(mid)));
    if (node.empty() || !spare_.empty())
      return; // `node` (if any) is released after the lock
    // Keep the node, without the requester's handle.
    node.mapped() = slot{};
    spare_ = std::move(node);
  }
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
}

std::vector<pending_requests::entry> pending_requests::close() {
  decltype(pending_) taken;
  {
    lock_guard guard{mtx_};
    closed_ = true;
    taken.swap(pending_);
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
