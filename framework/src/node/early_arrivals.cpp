// early_arrivals: holding a peer's messages while the handshake ends (see
// node/early_arrivals.hpp).
#include "node/early_arrivals.hpp"

#include <utility>

namespace ferry::detail {

void early_arrivals::expect(const caf::node_id& peer) {
  std::lock_guard<std::mutex> guard{mtx_};
  ++peers_[peer].expecting;
  queues_.store(peers_.size(), std::memory_order_release);
}

bool early_arrivals::hold(const caf::node_id& from, bool linked,
                          caf::mailbox_element_ptr& what) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = peers_.find(from);
  if (i == peers_.end() || i->second.held.size() >= max_held)
    return false;
  if (linked && i->second.held.empty() && !i->second.releasing)
    return false;
  i->second.held.emplace_back(std::move(what));
  return true;
}

size_t early_arrivals::release(const caf::node_id& peer,
                               const deliver_fn& deliver) {
  size_t count = 0;
  std::unique_lock<std::mutex> guard{mtx_};
  auto i = peers_.find(peer);
  if (i == peers_.end())
    return 0;
  if (i->second.expecting > 0)
    --i->second.expecting;
  // Another release is handing messages back already (two connects to the
  // same peer): it hands back what this one would have, in order.
  if (i->second.releasing)
    return 0;
  i->second.releasing = true;
  while (!i->second.held.empty()) {
    auto next = std::move(i->second.held.front());
    i->second.held.pop_front();
    ++count;
    guard.unlock();
    if (deliver)
      deliver(std::move(next));
    next.reset(); // dropped here, outside the lock
    guard.lock();
    i = peers_.find(peer);
  }
  i->second.releasing = false;
  if (i->second.expecting == 0) {
    peers_.erase(i);
    queues_.store(peers_.size(), std::memory_order_release);
  }
  return count;
}

} // namespace ferry::detail
