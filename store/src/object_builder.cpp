#include "ferry/store/object_builder.hpp"

#include "ferry/store/errc.hpp"

#include "store_impl.hpp"

#include <caf/make_message.hpp>

namespace ferry::store {

object_builder::object_builder(std::shared_ptr<detail::store_impl> store,
                               uint32_t slot, uint32_t holder, object_id id,
                               std::byte* data, uint64_t size) noexcept
  : store_(std::move(store)),
    slot_(slot),
    holder_(holder),
    id_(id),
    data_(data),
    size_(size) {
  // nop
}

object_builder::object_builder(object_builder&& other) noexcept
  : store_(std::move(other.store_)),
    slot_(other.slot_),
    holder_(other.holder_),
    id_(other.id_),
    data_(other.data_),
    size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
  other.id_ = object_id{};
}

object_builder& object_builder::operator=(object_builder&& other) noexcept {
  if (this != &other) {
    release();
    store_ = std::move(other.store_);
    slot_ = other.slot_;
    holder_ = other.holder_;
    id_ = other.id_;
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
    other.id_ = object_id{};
  }
  return *this;
}

object_builder::~object_builder() {
  release();
}

void object_builder::release() noexcept {
  if (store_) {
    store_->abandon(slot_, holder_, id_);
    store_.reset();
  }
  data_ = nullptr;
  size_ = 0;
  id_ = object_id{};
}

caf::expected<object_ref> object_builder::seal() {
  if (!store_)
    return caf::make_error(errc::invalid_handle,
                           "cannot seal an empty object_builder (moved from "
                           "or already sealed)");
  auto ref = store_->seal(slot_, holder_, id_);
  if (ref) {
    // The handle took over the builder's reference.
    store_.reset();
    data_ = nullptr;
    size_ = 0;
    id_ = object_id{};
  }
  return ref;
}

} // namespace ferry::store
