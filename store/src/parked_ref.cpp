#include "ferry/store/parked_ref.hpp"

#include "ferry/store/errc.hpp"

#include "store_impl.hpp"

namespace ferry::store {

caf::expected<parked_ref> park(const object_ref& ref) {
  if (!ref.store_)
    return caf::make_error(errc::invalid_handle,
                           "cannot park an empty object_ref");
  auto holder = ref.store_->park(ref.slot_, ref.id_);
  if (!holder)
    return std::move(holder.error());
  return parked_ref{ref.store_, ref.slot_, *holder, ref.id_, ref.size_};
}

parked_ref::parked_ref(std::shared_ptr<detail::store_impl> store, uint32_t slot,
                       uint32_t holder, object_id id, uint64_t size) noexcept
  : store_(std::move(store)),
    slot_(slot),
    holder_(holder),
    id_(id),
    size_(size) {
  // nop
}

parked_ref::parked_ref(const parked_ref& other)
  : store_(other.store_),
    slot_(other.slot_),
    holder_(other.holder_),
    id_(other.id_),
    size_(other.size_) {
  if (store_)
    store_->add_parked(slot_, holder_);
}

parked_ref::parked_ref(parked_ref&& other) noexcept
  : store_(std::move(other.store_)),
    slot_(other.slot_),
    holder_(other.holder_),
    id_(other.id_),
    size_(other.size_) {
  other.id_ = object_id{};
  other.size_ = 0;
}

parked_ref& parked_ref::operator=(const parked_ref& other) {
  if (this != &other) {
    parked_ref tmp{other};
    *this = std::move(tmp);
  }
  return *this;
}

parked_ref& parked_ref::operator=(parked_ref&& other) noexcept {
  if (this != &other) {
    reset();
    store_ = std::move(other.store_);
    slot_ = other.slot_;
    holder_ = other.holder_;
    id_ = other.id_;
    size_ = other.size_;
    other.id_ = object_id{};
    other.size_ = 0;
  }
  return *this;
}

parked_ref::~parked_ref() {
  reset();
}

caf::expected<object_ref> parked_ref::handle() const {
  if (!*this)
    return object_ref{};
  return get();
}

caf::expected<parked_ref> parked_ref::from_handle(const object_ref& ref) {
  if (!ref)
    return parked_ref{};
  return park(ref);
}

void parked_ref::reset() noexcept {
  if (store_) {
    store_->drop_parked(slot_, holder_);
    store_.reset();
  }
  id_ = object_id{};
  size_ = 0;
}

caf::expected<object_ref> parked_ref::get() const {
  if (!store_)
    return caf::make_error(errc::invalid_handle,
                           "cannot get through an empty parked_ref");
  return store_->get(id_);
}

} // namespace ferry::store
