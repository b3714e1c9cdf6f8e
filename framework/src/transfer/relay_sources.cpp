// relay_sources: the objects a node relays (see transfer/relay_sources.hpp).
#include "transfer/relay_sources.hpp"

#include "ferry/errc.hpp"

#include <algorithm>

namespace ferry::detail {

relay_sources::relay_sources(std::string node_name, clock::duration linger,
                             clock::duration grace, const clock& time)
  : node_name_(std::move(node_name)),
    linger_(linger),
    grace_(grace),
    clock_(&time) {
  // nop
}

void relay_sources::set_timer(std::function<void(clock::duration)> timer) {
  lock_guard guard{mtx_};
  timer_ = std::move(timer);
}

std::shared_ptr<relay_source>
relay_sources::open(uint64_t key, std::span<const std::byte> bytes,
                    std::shared_ptr<landing_buffer> buffer,
                    const std::string& owner, uint64_t max_chunk) {
  if (key == 0)
    return nullptr;
  std::shared_ptr<relay_source> result;
  std::vector<waiting> ready;
  {
    lock_guard guard{mtx_};
    auto& slot = sources_[key];
    if (slot)
      return nullptr;
    slot = std::make_shared<relay_source>(bytes, std::move(buffer), owner,
                                          node_name_, max_chunk, *clock_);
    result = slot;
    std::erase(gone_, key);
    std::erase_if(waiting_, [&](waiting& x) {
      if (x.req.key != key)
        return false;
      ready.emplace_back(std::move(x));
      return true;
    });
  }
  for (auto& x : ready)
    result->serve(x.requester, x.req.offset, x.req.length, x.req.request,
                  std::move(x.reply));
  return result;
}

void relay_sources::close(uint64_t key,
                          const std::shared_ptr<relay_source>& source,
                          const caf::error& why) {
  if (!source->failed(why))
    return; // sealed: kept for its linger
  lock_guard guard{mtx_};
  auto i = sources_.find(key);
  if (i != sources_.end() && i->second == source) {
    sources_.erase(i);
    gone_locked(key);
  }
}

void relay_sources::serve(const relay_request& req,
                          const std::string& requester,
                          relay_source::reply_fn reply) {
  std::shared_ptr<relay_source> source;
  waiting refused{req, requester, std::move(reply), {}};
  bool parked = false;
  std::function<void(clock::duration)> wake; // called after the lock
  {
    lock_guard guard{mtx_};
    if (auto i = sources_.find(req.key); i != sources_.end()) {
      source = i->second;
    } else if (grace_ > clock::duration::zero() &&
               waiting_.size() < max_waiting &&
               std::find(gone_.begin(), gone_.end(), req.key) == gone_.end()) {
      refused.deadline = clock_->now() + grace_;
      waiting_.emplace_back(std::move(refused));
      parked = true;
      wake = timer_;
    }
  }
  if (parked) {
    if (wake)
      wake(grace_);
    return;
  }
  if (!source) {
    not_here(refused);
    return;
  }
  source->serve(requester, req.offset, req.length, req.request,
                std::move(refused.reply));
}

void relay_sources::expire() {
  std::vector<waiting> expired;
  {
    auto now = clock_->now();
    lock_guard guard{mtx_};
    std::erase_if(waiting_, [&](waiting& x) {
      if (x.deadline > now)
        return false;
      expired.emplace_back(std::move(x));
      return true;
    });
  }
  for (auto& x : expired)
    not_here(x);
}

template <class Pred>
std::vector<std::shared_ptr<relay_source>>
relay_sources::erase_locked(Pred pred) {
  // A loop, not std::erase_if: the analysis sees gone_locked under the lock.
  std::vector<std::shared_ptr<relay_source>> dropped;
  for (auto i = sources_.begin(); i != sources_.end();) {
    if (!pred(*i->second)) {
      ++i;
      continue;
    }
    gone_locked(i->first);
    dropped.emplace_back(std::move(i->second));
    i = sources_.erase(i);
  }
  return dropped;
}

void relay_sources::sweep() {
  auto cutoff = clock_->now() - linger_;
  std::vector<std::shared_ptr<relay_source>> dropped; // released after
  lock_guard guard{mtx_};
  dropped = erase_locked(
    [cutoff](const relay_source& x) { return x.idle_since(cutoff); });
}

void relay_sources::clear() {
  decltype(sources_) dropped;
  std::vector<waiting> expired;
  {
    lock_guard guard{mtx_};
    dropped.swap(sources_);
    expired.swap(waiting_);
    timer_ = nullptr;
  }
  auto why =
    caf::make_error(errc::link_down, "node " + node_name_ + " shuts down");
  for (auto& [key, source] : dropped)
    source->failed(why);
  for (auto& x : expired)
    x.reply(why);
}

size_t relay_sources::size() const {
  lock_guard guard{mtx_};
  return sources_.size();
}

void relay_sources::gone_locked(uint64_t key) {
  gone_.push_back(key);
  if (gone_.size() > max_gone)
    gone_.pop_front();
}

void relay_sources::not_here(waiting& x) const {
  x.reply(caf::make_error(errc::transfer_failed,
                          "node " + node_name_ +
                            " holds no object under the relay key node " +
                            x.requester +
                            " named (never pulled here, or no longer "
                            "kept); pull it from its owner"));
}

} // namespace ferry::detail
