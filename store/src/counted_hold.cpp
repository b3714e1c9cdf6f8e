// Counting for the holds of handles, parked references and builders; see
// ferry/store/detail/counted_hold.hpp. What a kind adds on copy and gives back
// on reset is decided here, in `add_count` and `give_back`, and nowhere else.
#include "ferry/store/detail/counted_hold.hpp"

#include "store_impl.hpp"

#include <cassert>
#include <utility>

namespace ferry::store::detail {

namespace {

/// Adds one count of kind `k` through an existing holder (a copy).
void add_count(counted_hold::kind k, store_impl& store, uint32_t slot,
               uint32_t holder) noexcept {
  switch (k) {
  case counted_hold::kind::handle:
    store.add_handle(slot, holder);
    break;
  case counted_hold::kind::parked:
    store.add_parked(slot, holder);
    break;
  case counted_hold::kind::builder:
    break; // never copied (see the copy constructor)
  }
}

/// Gives back the count `hold` owns, as its kind says.
void give_back(const counted_hold& hold) noexcept {
  auto& store = *hold.store();
  switch (hold.which()) {
  case counted_hold::kind::handle:
    store.drop_handle(hold.slot(), hold.holder());
    break;
  case counted_hold::kind::parked:
    store.drop_parked(hold.slot(), hold.holder());
    break;
  case counted_hold::kind::builder:
    store.abandon(hold.slot(), hold.holder(), hold.id());
    break;
  }
}

} // namespace

counted_hold::counted_hold(kind k, std::shared_ptr<store_impl> store,
                           uint32_t slot, uint32_t holder, object_id id,
                           std::byte* data, uint64_t size) noexcept
  : kind_(k),
    store_(std::move(store)),
    slot_(slot),
    holder_(holder),
    id_(id),
    data_(data),
    size_(size) {
  // nop
}

counted_hold::counted_hold(const counted_hold& other) : kind_(other.kind_) {
  // A builder's count cannot be shared: its owner is move-only.
  assert(other.kind_ != kind::builder);
  if (other.kind_ == kind::builder)
    return;
  store_ = other.store_;
  slot_ = other.slot_;
  holder_ = other.holder_;
  id_ = other.id_;
  data_ = other.data_;
  size_ = other.size_;
  if (store_)
    add_count(kind_, *store_, slot_, holder_);
}

counted_hold::counted_hold(counted_hold&& other) noexcept : kind_(other.kind_) {
  take(other);
}

counted_hold& counted_hold::operator=(const counted_hold& other) {
  if (this != &other) {
    counted_hold tmp{other};
    *this = std::move(tmp);
  }
  return *this;
}

counted_hold& counted_hold::operator=(counted_hold&& other) noexcept {
  if (this != &other) {
    assert(kind_ == other.kind_);
    reset();
    take(other);
  }
  return *this;
}

counted_hold::~counted_hold() {
  reset();
}

void counted_hold::reset() noexcept {
  // Give back before letting go of the store: this may be its last owner.
  if (store_)
    give_back(*this);
  forget();
}

void counted_hold::forget() noexcept {
  store_.reset();
  id_ = object_id{};
  data_ = nullptr;
  size_ = 0;
}

void counted_hold::take(counted_hold& other) noexcept {
  store_ = std::move(other.store_);
  slot_ = other.slot_;
  holder_ = other.holder_;
  id_ = other.id_;
  data_ = other.data_;
  size_ = other.size_;
  other.forget();
}

} // namespace ferry::store::detail
