// The replacement allocation operators (see alloc_counter.hpp).
#include "alloc_counter.hpp"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

std::atomic<uint64_t> allocation_count{0};

void* counted_alloc(std::size_t size, std::size_t align) {
  allocation_count.fetch_add(1, std::memory_order_relaxed);
  if (size == 0)
    size = 1;
  if (align <= alignof(std::max_align_t))
    return std::malloc(size);
  return std::aligned_alloc(align, (size + align - 1) / align * align);
}

} // namespace

uint64_t ferry::bench::allocations() {
  return allocation_count.load(std::memory_order_relaxed);
}

void* operator new(std::size_t size) {
  if (auto* p = counted_alloc(size, 0))
    return p;
  throw std::bad_alloc{};
}

void* operator new[](std::size_t size) {
  return operator new(size);
}

void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return counted_alloc(size, 0);
}

void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return counted_alloc(size, 0);
}

void* operator new(std::size_t size, std::align_val_t align) {
  if (auto* p
      = counted_alloc(size, static_cast<std::size_t>(align)))
    return p;
  throw std::bad_alloc{};
}

void* operator new[](std::size_t size, std::align_val_t align) {
  return operator new(size, align);
}

void* operator new(std::size_t size, std::align_val_t align,
                   const std::nothrow_t&) noexcept {
  return counted_alloc(size, static_cast<std::size_t>(align));
}

void* operator new[](std::size_t size, std::align_val_t align,
                     const std::nothrow_t&) noexcept {
  return counted_alloc(size, static_cast<std::size_t>(align));
}

void operator delete(void* p) noexcept {
  std::free(p);
}

void operator delete[](void* p) noexcept {
  std::free(p);
}

void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}

void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}

void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}

void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}

void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}

void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}

void operator delete[](void* p, std::align_val_t,
                       const std::nothrow_t&) noexcept {
  std::free(p);
}
