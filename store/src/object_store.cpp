#include "ferry/store/object_store.hpp"

#include "ferry/store/errc.hpp"

#include "store_impl.hpp"

#include <caf/make_message.hpp>

#include <cstring>

namespace ferry::store {

namespace {

caf::error detached() {
  return caf::make_error(errc::invalid_handle,
                         "the object_store handle is not attached (default "
                         "constructed, moved from, or detached)");
}

const std::string empty_name;

} // namespace

object_store::object_store(std::shared_ptr<detail::store_impl> impl) noexcept
  : impl_(std::move(impl)) {
  // nop
}

caf::expected<object_store> object_store::attach(const store_config& cfg) {
  auto impl = detail::store_impl::attach(cfg);
  if (!impl)
    return std::move(impl.error());
  return object_store{std::move(*impl)};
}

caf::error object_store::remove(const std::string& name) {
  return detail::store_impl::remove(name);
}

void object_store::detach() noexcept {
  impl_.reset();
}

const std::string& object_store::name() const noexcept {
  return impl_ ? impl_->name() : empty_name;
}

uint64_t object_store::token() const noexcept {
  return impl_ ? impl_->token() : 0;
}

uint64_t object_store::capacity() const noexcept {
  return impl_ ? impl_->capacity() : 0;
}

caf::expected<object_builder> object_store::create(uint64_t size) {
  if (!impl_)
    return detached();
  return impl_->create(size);
}

caf::expected<object_ref> object_store::put(std::span<const std::byte> bytes) {
  if (!impl_)
    return detached();
  auto builder = impl_->create(bytes.size());
  if (!builder)
    return std::move(builder.error());
  if (!bytes.empty())
    std::memcpy(builder->bytes().data(), bytes.data(), bytes.size());
  return builder->seal();
}

caf::expected<object_ref> object_store::get(object_id id) {
  if (!impl_)
    return detached();
  return impl_->get(id);
}

caf::expected<object_ref> object_store::redeem(const transfer_ticket& ticket) {
  if (!impl_)
    return detached();
  return impl_->redeem(ticket);
}

caf::error object_store::cancel(const transfer_ticket& ticket) {
  if (!impl_)
    return detached();
  return impl_->cancel(ticket);
}

caf::error object_store::unpin(object_id id) {
  if (!impl_)
    return detached();
  return impl_->unpin(id);
}

caf::expected<size_t> object_store::reap() {
  if (!impl_)
    return detached();
  return impl_->reap();
}

size_t object_store::reaped_at_attach() const noexcept {
  return impl_ ? impl_->reaped_at_attach() : 0;
}

caf::expected<ferry::store::memory_summary> object_store::memory_summary() {
  if (!impl_)
    return detached();
  return impl_->summary();
}

caf::expected<ferry::store::store_totals> object_store::totals() {
  if (!impl_)
    return detached();
  return impl_->totals();
}

} // namespace ferry::store
