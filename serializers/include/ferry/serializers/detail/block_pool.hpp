// block_pool: freed memory blocks of one size, kept for the next allocation.
// Not API.
//
// The objects made per message (the CAF message holding a decoded value, the
// mailbox element a link delivers it in, the CAF message holding a wire message
// a link sends) are made on one thread and destroyed on another: a thread-local
// cache would only move blocks from one thread to the other. A
// `block_pool<Size>` is one free list per block size for the whole process,
// holding at most `Capacity` blocks; a class gets its memory from it by
// declaring `operator new` and `operator delete` that call `take` and `give`
// (see `pooled_message.hpp`, the framework's `credited_element`). A request of
// another size, or one the empty list cannot serve, goes to the global
// `operator new`; a block the full list cannot keep goes back to the global
// `operator delete`.
//
// Blocks come from the global `operator new`, so a class with an alignment
// above `__STDCPP_DEFAULT_NEW_ALIGNMENT__` must not use the pool.
//
// Thread-safety: `take` and `give` may be called from any thread; one mutex
// per block size guards its list. The lists are leaked on purpose: blocks
// may be given back during static destruction.
#pragma once

#include "ferry/serializers/detail/thread_safety.hpp"

#include <cstddef>
#include <new>
#include <utility>

namespace ferry::serializers::detail {

template <std::size_t Size, std::size_t Capacity = 1024>
class block_pool {
public:
  static_assert(Size >= sizeof(void*), "a block must hold the list's link");

  /// Returns a block of `size` bytes: a kept one when `size == Size` and
  /// the list has one, else a new one.
  static void* take(std::size_t size) {
    if (size == Size)
      if (auto* ptr = instance().pop())
        return ptr;
    return ::operator new(size);
  }

  /// Keeps `ptr` (a block of `size` bytes from `take`) for the next `take`,
  /// or frees it when the list is full or the size is another.
  static void give(void* ptr, std::size_t size) noexcept {
    if (size == Size && instance().push(ptr))
      return;
    ::operator delete(ptr);
  }

private:
  struct node {
    node* next;
  };

  static block_pool& instance() {
    static auto* pool = new block_pool;
    return *pool;
  }

  void* pop() {
    lock_guard guard{mtx_};
    if (head_ == nullptr)
      return nullptr;
    --count_;
    return std::exchange(head_, head_->next);
  }

  bool push(void* ptr) noexcept {
    lock_guard guard{mtx_};
    if (count_ == Capacity)
      return false;
    ++count_;
    head_ = ::new (ptr) node{head_};
    return true;
  }

  mutex mtx_;
  node* head_ FERRY_GUARDED_BY(mtx_) = nullptr;
  std::size_t count_ FERRY_GUARDED_BY(mtx_) = 0;
};

} // namespace ferry::serializers::detail
