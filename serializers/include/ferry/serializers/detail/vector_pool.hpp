// The vector pool's typed side (see ferry/serializers/vector_pool.hpp). Not
// API.
//
// The pool itself is type-erased (src/vector_pool.cpp): it keeps heap-held
// `std::vector<E>` objects with their element type and capacity. These
// templates take and give vectors of one element type
// (detail/recycling_message.hpp builds messages that give theirs back).
#pragma once

#include "ferry/serializers/vector_pool.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace ferry::serializers::detail {

/// Element types whose vectors the pool keeps: numbers and `std::byte`
/// (trivially copyable, so a reused vector's stale elements are harmless
/// until overwritten).
template <class E>
inline constexpr bool poolable_element = (std::is_arithmetic_v<E> &&
                                          !std::is_same_v<E, bool>) ||
                                         std::is_same_v<E, std::byte>;

/// Whether `T` is a `std::vector` the pool keeps.
template <class T>
inline constexpr bool is_poolable_vector = false;

template <class E>
inline constexpr bool is_poolable_vector<std::vector<E>> = poolable_element<E>;

/// Returns whether the pool would keep a vector of `bytes` capacity (a
/// lock-free check of the limits).
bool pool_keeps(size_t bytes) noexcept;

/// Removes and returns a kept `std::vector<E>` (as `void*`, made by `new`)
/// whose capacity is at least `bytes` and at most twice that, the smallest
/// such (of equal ones the one kept last); null when there is none.
void* take_pooled(const std::type_info& element, size_t bytes) noexcept;

/// Frees the vectors idle for longer than `max_idle` as of `now` (what
/// `trim_vector_pool` does at the current time; tests pass a later time
/// instead of waiting).
void trim_vector_pool_at(std::chrono::steady_clock::time_point now);

/// Keeps `vec` (a `std::vector<E>` made by `new`, `bytes` its capacity);
/// returns false, keeping nothing, when the limits refuse it.
bool give_pooled(const std::type_info& element, void* vec, size_t bytes,
                 void (*destroy)(void*)) noexcept;

/// Returns a kept vector with capacity for at least `n` elements, its
/// elements as they were (its size is at least `n` when it held that many,
/// so resizing it to `n` writes nothing), or an empty vector without
/// capacity when the pool has none. Counts a reuse or a miss when `n`
/// elements are large enough to be pooled. REQUIRES: the caller overwrites
/// every element before reading it.
template <class E>
std::vector<E> take_vector_unwritten(size_t n) noexcept {
  static_assert(poolable_element<E>);
  auto* held =
    static_cast<std::vector<E>*>(take_pooled(typeid(E), n * sizeof(E)));
  if (held == nullptr)
    return {};
  std::vector<E> result = std::move(*held);
  delete held;
  return result;
}

/// Like `take_vector_unwritten`, but the vector comes back empty.
template <class E>
std::vector<E> take_vector(size_t n) noexcept {
  auto result = take_vector_unwritten<E>(n);
  result.clear();
  return result;
}

/// Hands `xs` to the pool if it is large enough; otherwise (or when the pool
/// is full or out of memory) `xs` is freed as usual.
template <class E>
void give_vector(std::vector<E>&& xs) noexcept {
  static_assert(poolable_element<E>);
  auto bytes = xs.capacity() * sizeof(E);
  if (!pool_keeps(bytes))
    return;
  std::vector<E>* held = nullptr;
  try {
    held = new std::vector<E>(std::move(xs));
  } catch (...) {
    return; // xs still owns its memory and frees it
  }
  if (!give_pooled(typeid(E), held, bytes,
                   [](void* p) { delete static_cast<std::vector<E>*>(p); }))
    delete held;
}

/// Returns `xs` held by a shared pointer that hands it to the pool when the
/// last copy goes (a plain `make_shared` when it is too small to be kept).
template <class E>
std::shared_ptr<std::vector<E>> shared_pooled(std::vector<E>&& xs) {
  if (!pool_keeps(xs.capacity() * sizeof(E)))
    return std::make_shared<std::vector<E>>(std::move(xs));
  return std::shared_ptr<std::vector<E>>(new std::vector<E>(std::move(xs)),
                                         [](std::vector<E>* held) {
                                           give_vector(std::move(*held));
                                           delete held;
                                         });
}

} // namespace ferry::serializers::detail
