// credit_token and credited_element (see link/credited_element.hpp).
#include "link/credited_element.hpp"

#include "link/link_state.hpp"

#include "ferry/serializers/detail/block_pool.hpp"

namespace ferry::detail {

namespace {

/// Freed element blocks (at most 1024, about 100 KiB).
using element_pool =
  serializers::detail::block_pool<sizeof(credited_element), 1024>;

} // namespace

void* credited_element::operator new(std::size_t size) {
  return element_pool::take(size);
}

void credited_element::operator delete(void* ptr, std::size_t size) noexcept {
  element_pool::give(ptr, size);
}

void credit_token::release() {
  if (bytes_ > 0)
    if (auto link = link_.lock())
      link->return_credit(std::exchange(bytes_, 0), held_);
}

credited_element::credited_element(caf::strong_actor_ptr sender,
                                   caf::message_id mid, caf::message content,
                                   credit_token token)
  : caf::mailbox_element(std::move(sender), mid, {}),
    msg_(std::move(content)),
    token_(std::move(token)) {
  // nop
}

caf::type_erased_tuple& credited_element::content() {
  if (msg_.empty())
    return empty_;
  return msg_.content();
}

const caf::type_erased_tuple& credited_element::content() const {
  if (msg_.empty())
    return empty_;
  return msg_.content();
}

caf::message credited_element::move_content_to_message() {
  return std::move(msg_);
}

caf::message credited_element::copy_content_to_message() const {
  return msg_;
}

} // namespace ferry::detail
