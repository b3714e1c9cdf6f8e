// Writable buffers for objects being created.
//
// `object_store::create(size)` returns an `object_builder`: a writable span
// of `size` bytes in shared memory that nobody else can see yet. Fill it,
// then call `seal()`, which makes the object immutable and returns its
// `object_ref`. Dropping a builder without sealing frees the memory. If the
// process dies before sealing, the reaper frees it.
//
// Usage:
//
//     auto builder = store.create(n);
//     if (!builder) return builder.error();
//     std::memcpy(builder->bytes().data(), src, n);
//     auto ref = std::move(*builder).seal();
//
// Thread-safety: a builder is owned by one thread at a time; it may be moved
// to another thread. Distinct builders are independent.
#pragma once

#include "ferry/store/detail/counted_hold.hpp"
#include "ferry/store/fwd.hpp"
#include "ferry/store/object_id.hpp"
#include "ferry/store/object_ref.hpp"

#include <caf/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

namespace ferry::store {

/// An unsealed object with a writable buffer. See the header comment.
class object_builder {
public:
  /// Constructs an empty builder.
  object_builder() noexcept = default;

  object_builder(const object_builder&) = delete;
  object_builder& operator=(const object_builder&) = delete;

  /// Takes over `other`'s buffer; `other` becomes empty.
  object_builder(object_builder&& other) noexcept = default;

  /// Frees this builder's buffer (if unsealed), then takes over `other`'s.
  object_builder& operator=(object_builder&& other) noexcept = default;

  /// Frees the buffer unless it was sealed.
  ~object_builder() = default;

  /// Returns true if the builder holds an unsealed buffer.
  explicit operator bool() const noexcept { return hold_.data() != nullptr; }

  /// Returns the id the object will have.
  object_id id() const noexcept { return hold_.id(); }

  /// Returns the buffer's size in bytes.
  uint64_t size() const noexcept { return hold_.size(); }

  /// Returns the writable buffer (empty for an empty builder).
  std::span<std::byte> bytes() const noexcept {
    return {hold_.data(), static_cast<size_t>(hold_.size())};
  }

  /// Makes the object immutable and returns a handle that takes over the
  /// builder's reference; the builder becomes empty. After `seal`, no API
  /// writes the object again.
  /// REQUIRES: the builder is not empty (`errc::invalid_handle` otherwise).
  [[nodiscard]] caf::expected<object_ref> seal();

private:
  friend class detail::store_impl;

  /// Takes over `hold`, a count of kind `builder` its maker added.
  explicit object_builder(detail::counted_hold hold) noexcept
    : hold_(std::move(hold)) {
    // nop
  }

  /// The unsealed object's count (see detail/counted_hold.hpp).
  detail::counted_hold hold_{detail::counted_hold::kind::builder};
};

} // namespace ferry::store
