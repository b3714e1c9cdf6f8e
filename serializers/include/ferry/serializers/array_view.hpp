// A read-only view of a contiguous array decoded without a copy.
//
// `array_view<T>` is what `raw` decodes into when the frames should not be
// copied: the elements stay where the frame's bytes are (a network buffer,
// shared memory), and the view holds the frame's keep-alive so the memory
// lives as long as the view. Mutation needs an explicit copy (`to_vector`).
// Decoding from an lvalue payload whose frame owns its bytes yields a view
// valid while that payload lives; decoding from an rvalue payload moves the
// bytes into the view's keep-alive.
//
// Thread-safety: a value; const access from many threads is safe.
//
//     auto v = reg.decode<array_view<double>>(std::move(p), opts);
//     double sum = std::accumulate(v->begin(), v->end(), 0.0);
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace ferry::serializers {

/// A read-only view of `T`s that keeps their memory alive.
template <class T>
class array_view {
public:
  using value_type = T;
  using const_iterator = const T*;

  array_view() noexcept = default;

  /// Views `xs`; `keep_alive` (may be null) keeps their memory alive.
  array_view(std::span<const T> xs, std::shared_ptr<const void> keep_alive)
    : xs_(xs),
      keep_alive_(std::move(keep_alive)) {}

  /// Returns the viewed elements.
  [[nodiscard]] std::span<const T> span() const noexcept { return xs_; }

  [[nodiscard]] const T* data() const noexcept { return xs_.data(); }

  [[nodiscard]] size_t size() const noexcept { return xs_.size(); }

  [[nodiscard]] bool empty() const noexcept { return xs_.empty(); }

  [[nodiscard]] const T& operator[](size_t i) const noexcept { return xs_[i]; }

  [[nodiscard]] const T* begin() const noexcept { return xs_.data(); }

  [[nodiscard]] const T* end() const noexcept {
    return xs_.data() + xs_.size();
  }

  /// Returns the keep-alive (null when the view relies on its source).
  [[nodiscard]] const std::shared_ptr<const void>& keep_alive() const noexcept {
    return keep_alive_;
  }

  /// Returns a mutable copy of the elements.
  [[nodiscard]] std::vector<T> to_vector() const {
    return {xs_.begin(), xs_.end()};
  }

private:
  std::span<const T> xs_;
  std::shared_ptr<const void> keep_alive_;
};

} // namespace ferry::serializers
