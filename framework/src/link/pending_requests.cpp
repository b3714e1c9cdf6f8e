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
  std::lock_guard<std::mutex> guard{mtx_};
  if (closed_)
    return false;
  pending_.emplace(std::make_pair(requester->id(), request_key(mid)),
                   slot{{caf::actor_cast<caf::weak_actor_ptr>(requester), mid}});
  return true;
}

void pending_requests::answered(uint64_t requester, caf::message_id mid) {
  std::lock_guard<std::mutex> guard{mtx_};
  pending_.erase(std::make_pair(requester, request_key(mid)));
}

bool pending_requests::claim_held_answer(uint64_t requester,
                                         caf::message_id mid) {
  if (!mid.is_response())
    return false;
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = pending_.find(std::make_pair(requester, request_key(mid)));
  return i != pending_.end() && !std::exchange(i->second.answer_held, true);
}

void pending_requests::forget(uint64_t requester) {
  std::lock_guard<std::mutex> guard{mtx_};
  pending_.erase(pending_.lower_bound(std::make_pair(requester, uint64_t{0})),
                 pending_.lower_bound(
                   std::make_pair(requester + 1, uint64_t{0})));
}

std::vector<pending_requests::entry> pending_requests::close() {
  decltype(pending_) taken;
  {
    std::lock_guard<std::mutex> guard{mtx_};
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
  std::lock_guard<std::mutex> guard{mtx_};
  return pending_.size();
}

} // namespace ferry::detail
