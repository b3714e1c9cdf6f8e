// landings: the import landing of a node (see node/landings.hpp).
#include "node/landings.hpp"

namespace ferry::detail {

namespace {

/// A landed object's share of the budget: given back when the last frame
/// viewing the object goes.
struct landed_object {
  store::object_ref ref;
  std::shared_ptr<std::atomic<uint64_t>> ahead;
  uint64_t size = 0;

  ~landed_object() { ahead->fetch_sub(size, std::memory_order_relaxed); }
};

} // namespace

landings::landings() = default;

landings::~landings() = default;

void landings::import_into(store::object_store store) {
  auto target = std::make_shared<import_target>();
  target->limit = store.capacity() / import_ahead_share;
  target->store = std::move(store);
  target->ahead = std::make_shared<std::atomic<uint64_t>>(0);
  import_.store(std::move(target));
}

std::optional<import_landing::place> landings::begin(uint64_t size) {
  auto target = import_.load();
  if (!target)
    return std::nullopt;
  auto before = target->ahead->fetch_add(size, std::memory_order_relaxed);
  auto held = std::make_shared<landed_object>();
  held->ahead = target->ahead;
  held->size = size; // from here on, `held` gives the bytes back
  if (before > target->limit || size > target->limit - before)
    return std::nullopt;
  auto object = target->store.create(size);
  if (!object)
    return std::nullopt;
  return place{std::move(*object), std::move(held)};
}

landed_import landings::seal(place&& filled) {
  auto ref = std::move(filled.object).seal();
  if (!ref)
    return {};
  auto held = std::const_pointer_cast<landed_object>(
    std::static_pointer_cast<const landed_object>(filled.keep_alive));
  held->ref = *ref;
  return {std::move(*ref), std::move(filled.keep_alive)};
}

} // namespace ferry::detail
