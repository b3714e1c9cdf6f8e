// credit_token and credited_element (see link/credited_element.hpp).
#include "link/credited_element.hpp"

#include "link/link_state.hpp"

#include <mutex>
#include <new>

namespace ferry::detail {

namespace {

/// Most free blocks kept (about 100 KiB).
constexpr size_t pool_size = 1024;

/// Freed element blocks, linked through their first bytes.
struct element_pool {
  struct block {
    block* next;
  };

  std::mutex mtx;
  block* head = nullptr;
  size_t count = 0;

  void* take() {
    std::lock_guard<std::mutex> guard{mtx};
    if (head == nullptr)
      return nullptr;
    --count;
    return std::exchange(head, head->next);
  }

  bool give(void* ptr) {
    std::lock_guard<std::mutex> guard{mtx};
    if (count == pool_size)
      return false;
    ++count;
    head = ::new (ptr) block{head};
    return true;
  }
};

element_pool& pool() {
  // Leaked on purpose: elements may die during static destruction.
  static auto* instance = new element_pool;
  return *instance;
}

} // namespace

void* credited_element::operator new(std::size_t size) {
  if (size == sizeof(credited_element))
    if (auto ptr = pool().take())
      return ptr;
  return ::operator new(size);
}

void credited_element::operator delete(void* ptr, std::size_t size) noexcept {
  if (size == sizeof(credited_element) && pool().give(ptr))
    return;
  ::operator delete(ptr);
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
