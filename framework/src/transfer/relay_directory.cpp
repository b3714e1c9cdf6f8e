// relay_directory: the owner's side of relaying (see
// transfer/relay_directory.hpp).
#include "transfer/relay_directory.hpp"

#include <algorithm>

namespace ferry::detail {

relay_directory::relay_directory(clock::duration linger, const clock& time)
  : linger_(linger),
    clock_(&time),
    keys_(std::random_device{}()) {
  // nop
}

relay_offer relay_directory::offer(uint64_t object_id,
                                   const std::string& peer) {
  lock_guard guard{mtx_};
  if (entries_.size() >= 2 * pruned_at_)
    prune_locked();
  auto& found = entries_[object_id];
  relay_hint hint;
  auto cutoff = (clock_->now() - linger_).time_since_epoch().count();
  if (found && found->leases == 0 && found->released < cutoff)
    found->last.clear(); // the nodes it went to let it go by now
  if (!found) {
    found = std::make_shared<entry>();
    while (found->key == 0)
      found->key = keys_();
  } else if (!found->last.empty() && found->last != peer &&
             found->last.size() <= max_relay_name) {
    // A node is never told to pull from itself, nor from a name too long
    // for the hint.
    hint.from = found->last;
  }
  hint.key = found->key;
  found->last = peer;
  ++found->leases;
  // The lease ends with the transfer: it notes when, for the linger.
  std::shared_ptr<const void> lease{static_cast<const void*>(found.get()),
                                    [held = found, time = clock_](const void*) {
                                      held->released =
                                        time->now().time_since_epoch().count();
                                      --held->leases;
                                    }};
  return {std::move(lease), std::move(hint)};
}

void relay_directory::prune_locked() {
  auto cutoff = (clock_->now() - linger_).time_since_epoch().count();
  std::erase_if(entries_, [cutoff](auto& x) {
    return x.second->leases == 0 && x.second->released < cutoff;
  });
  pruned_at_ = std::max<size_t>(16, entries_.size());
}

} // namespace ferry::detail
