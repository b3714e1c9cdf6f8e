// relay_source: serving one object to the nodes pulling it after this one
// (see transfer/relay_source.hpp).
#include "transfer/relay_source.hpp"

#include "ferry/errc.hpp"

#include <algorithm>
#include <iterator>

namespace ferry::detail {

relay_source::relay_source(std::span<const std::byte> bytes,
                           std::shared_ptr<landing_buffer> buffer,
                           std::string owner, std::string node_name,
                           uint64_t max_chunk, const clock& time)
  : bytes_(bytes),
    owner_(std::move(owner)),
    node_name_(std::move(node_name)),
    max_chunk_(max_chunk),
    memory_(std::make_shared<memory>(memory{std::move(buffer), {}})),
    clock_(&time),
    last_use_(time.now()) {
  // nop
}

void relay_source::landed(uint64_t offset, uint64_t length) {
  if (length == 0)
    return;
  std::vector<parked> ready;
  origin from;
  {
    lock_guard guard{mtx_};
    auto begin = offset;
    auto end = offset + length;
    // Merge with the ranges that touch [begin, end).
    auto i = landed_.upper_bound(begin);
    if (i != landed_.begin() && std::prev(i)->second >= begin)
      --i;
    while (i != landed_.end() && i->first <= end) {
      begin = std::min(begin, i->first);
      end = std::max(end, i->second);
      i = landed_.erase(i);
    }
    landed_.emplace(begin, end);
    // A loop, not erase_if: the analysis sees the lock held here, not in
    // a lambda.
    for (auto j = parked_.begin(); j != parked_.end();) {
      if (covers_locked(j->offset, j->length)) {
        ready.emplace_back(std::move(*j));
        j = parked_.erase(j);
      } else {
        ++j;
      }
    }
    from = origin_locked();
  }
  for (auto& x : ready)
    x.reply(reply_for(from, x.offset, x.length, x.request));
}

void relay_source::sealed(const store::object_ref& ref,
                          store::object_store store) {
  std::vector<parked> ready;
  origin from;
  {
    lock_guard guard{mtx_};
    if (memory_) {
      // Replies made before keep the sealed object until they are written.
      memory_->ref = ref;
      memory_.reset();
    }
    store_ = std::move(store);
    id_ = ref.id();
    if (pulled_from_locked())
      held_ = ref;
    landed_.clear();
    landed_.emplace(0, bytes_.size());
    ready.swap(parked_);
    last_use_ = clock_->now();
    from = origin_locked();
  }
  for (auto& x : ready)
    x.reply(reply_for(from, x.offset, x.length, x.request));
}

bool relay_source::failed(const caf::error& why) {
  std::vector<parked> waiting;
  {
    lock_guard guard{mtx_};
    if (store_)
      return false; // sealed: every byte is in
    failure_ = why;
    waiting.swap(parked_);
  }
  for (auto& x : waiting)
    x.reply(caf::make_error(errc::transfer_failed, "node " + node_name_ +
                                                     " gave up pulling the "
                                                     "object from node " +
                                                     owner_ + ": " +
                                                     render(why)));
  return true;
}

void relay_source::serve(const std::string& requester, uint64_t offset,
                         uint64_t length, uint64_t request, reply_fn reply) {
  auto refuse = [&](const std::string& why) {
    reply(caf::make_error(
      errc::transfer_failed,
      "node " + node_name_ + " does not relay bytes " + std::to_string(offset) +
        " to " + std::to_string(offset + length) + " of an object of node " +
        owner_ + " to node " + requester + ": " + why));
  };
  unique_lock guard{mtx_};
  if (offset > bytes_.size() || length > bytes_.size() - offset ||
      length == 0) {
    guard.unlock();
    refuse("the object holds " + std::to_string(bytes_.size()) + " bytes");
    return;
  }
  if (length > max_chunk_) {
    guard.unlock();
    refuse("a chunk of more than " + std::to_string(max_chunk_) +
           " bytes (4 times chunk-size); set the same chunk-size on every "
           "node");
    return;
  }
  if (failure_) {
    auto why = render(failure_);
    guard.unlock();
    refuse("its own pull failed: " + why);
    return;
  }
  auto& served = served_[requester];
  if (length > bytes_.size() - served) {
    guard.unlock();
    refuse("it served that node the object's size already; a node pulls "
           "each chunk once");
    return;
  }
  served += length;
  last_use_ = clock_->now();
  if (covers_locked(offset, length)) {
    auto from = origin_locked();
    // The last request of the last node pulling from here lets the object
    // go (after this reply, which takes a handle of its own).
    std::optional<store::object_ref> done;
    if (held_ && !pulled_from_locked())
      done.swap(held_);
    guard.unlock();
    reply(reply_for(from, offset, length, request));
    return;
  }
  if (parked_.size() >= max_parked) {
    served -= length;
    guard.unlock();
    refuse(std::to_string(max_parked) +
           " requests wait for bytes not yet landed");
    return;
  }
  parked_.push_back(parked{offset, length, request, std::move(reply)});
}

bool relay_source::idle_since(clock::time_point cutoff) const {
  lock_guard guard{mtx_};
  return store_ && last_use_ < cutoff;
}

bool relay_source::covers_locked(uint64_t offset, uint64_t length) const {
  auto i = landed_.upper_bound(offset);
  if (i == landed_.begin())
    return false;
  --i;
  return i->first <= offset && i->second >= offset + length;
}

bool relay_source::pulled_from_locked() const {
  return std::any_of(served_.begin(), served_.end(),
                     [this](auto& x) { return x.second < bytes_.size(); });
}

relay_source::origin relay_source::origin_locked() const {
  return origin{memory_, memory_ ? std::nullopt : store_, id_};
}

caf::expected<chunk_reply> relay_source::reply_for(const origin& from,
                                                   uint64_t offset,
                                                   uint64_t length,
                                                   uint64_t request) const {
  if (from.landing)
    return chunk_reply{
      request, wire_bytes{bytes_.subspan(offset, length), from.landing}};
  // Sealed: served while anyone on this host holds the object.
  auto store = from.store;
  auto ref = store->get(from.id);
  if (!ref)
    return caf::make_error(errc::transfer_failed,
                           "node " + node_name_ +
                             " no longer holds the "
                             "object of node " +
                             owner_ +
                             " (its receivers let it go); pull it from "
                             "its owner");
  auto held = std::make_shared<store::object_ref>(std::move(*ref));
  auto bytes = held->bytes().subspan(offset, length);
  return chunk_reply{request, wire_bytes{bytes, std::move(held)}};
}

} // namespace ferry::detail
