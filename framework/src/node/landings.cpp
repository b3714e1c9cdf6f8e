// landings: chunk landings and the import landing of a node (see
// node/landings.hpp).
#include "node/landings.hpp"

#include <cstring>
#include <optional>

namespace ferry::detail {

namespace {

/// A landed object as its frame holds it: keeps the bytes the frame views
/// and gives the object's share of the budget back when the message goes.
struct landed_object {
  store::object_ref ref;
  std::shared_ptr<std::atomic<uint64_t>> ahead;
  uint64_t size = 0;

  ~landed_object() {
    ahead->fetch_sub(size, std::memory_order_relaxed);
  }
};

} // namespace

landings::landings() = default;

landings::~landings() = default;

uint64_t landings::add(std::weak_ptr<landing_buffer> target, uint64_t offset,
                       uint64_t length) {
  std::lock_guard<std::mutex> guard{mtx_};
  uint64_t key = 0;
  while (key == 0 || chunks_.contains(key))
    key = (uint64_t{random_()} << 32) | random_();
  chunks_.emplace(key, chunk_place{std::move(target), offset, length});
  return key;
}

void landings::remove(uint64_t key) {
  std::lock_guard<std::mutex> guard{mtx_};
  chunks_.erase(key);
}

bool landings::land_chunk(uint64_t key, std::span<const std::byte> bytes) {
  std::optional<chunk_place> place;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = chunks_.find(key);
    if (i == chunks_.end() || i->second.length != bytes.size())
      return false;
    place = std::move(i->second);
    chunks_.erase(i);
  }
  auto target = place->target.lock();
  return target && target->land(place->offset, bytes);
}

void landings::import_into(store::object_store store) {
  auto target = std::make_shared<import_target>();
  target->limit = store.capacity() / import_ahead_share;
  target->store = std::move(store);
  target->ahead = std::make_shared<std::atomic<uint64_t>>(0);
  import_.store(std::move(target));
}

landed_import landings::land_import(std::span<const std::byte> bytes) {
  auto target = import_.load();
  if (!target)
    return {};
  auto n = static_cast<uint64_t>(bytes.size());
  auto before = target->ahead->fetch_add(n, std::memory_order_relaxed);
  auto held = std::make_shared<landed_object>();
  held->ahead = target->ahead;
  held->size = n; // from here on, `held` gives the bytes back
  if (before > target->limit || n > target->limit - before)
    return {};
  auto object = target->store.create(n);
  if (!object)
    return {};
  std::memcpy(object->bytes().data(), bytes.data(), n);
  auto ref = object->seal();
  if (!ref)
    return {};
  held->ref = *ref;
  return {std::move(*ref), std::move(held)};
}

} // namespace ferry::detail
