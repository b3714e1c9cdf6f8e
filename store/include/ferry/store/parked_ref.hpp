// References that let the store spill their object.
//
// An `object_ref` keeps its object in memory: it gives a raw view of shared
// memory, so the object cannot move while the handle lives. A `parked_ref`
// is a counted reference without that view, like a Ray ObjectRef held
// without `ray.get`: it keeps the object alive (it counts like a handle, in
// shared memory, reclaimed if the process dies) but lets the store spill the
// object to disk when memory is short. `get()` returns an `object_ref`,
// restoring the object from its spill file first if needed.
//
// Usage:
//
//     auto ref = store->put(bytes);              // in memory, pinned
//     auto parked = ferry::store::park(*ref);    // expected<parked_ref>
//     ref->reset();                              // now it may be spilled
//     ...
//     auto again = parked->get();                // expected<object_ref>
//     use(again->bytes());
//
// Hold objects you will not read for a while (caches, queues of work) as
// parked references; hold `object_ref`s only while reading.
//
// Thread-safety: like `object_ref` (distinct instances from any threads; one
// instance is not synchronized).
#pragma once

#include "ferry/store/fwd.hpp"
#include "ferry/store/object_id.hpp"
#include "ferry/store/object_ref.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <memory>

namespace ferry::store {

class parked_ref;

/// Returns a parked reference to `ref`'s object (see the header comment).
/// Fails with `invalid_handle` for an empty handle, `table_full` when the
/// store's holder table is full.
[[nodiscard]] caf::expected<parked_ref> park(const object_ref& ref);

/// A counted reference that does not keep its object in memory. See the
/// header comment.
class parked_ref {
public:
  /// Constructs an empty reference.
  parked_ref() noexcept = default;

  /// Adds a reference to the same object.
  parked_ref(const parked_ref& other);

  /// Takes over `other`'s reference; `other` becomes empty.
  parked_ref(parked_ref&& other) noexcept;

  parked_ref& operator=(const parked_ref& other);
  parked_ref& operator=(parked_ref&& other) noexcept;

  /// Drops the reference; frees the object (and its spill file) if it was
  /// the last one.
  ~parked_ref();

  /// Returns true if the reference points to an object.
  explicit operator bool() const noexcept {
    return store_ != nullptr;
  }

  /// Returns the object's id, or `object_id{0}` when empty.
  object_id id() const noexcept {
    return id_;
  }

  /// Returns the object's size in bytes.
  uint64_t size() const noexcept {
    return size_;
  }

  /// Returns a handle to the object, restoring it from its spill file if it
  /// was spilled (`store_full` or `spill_failed` if that cannot be done now).
  [[nodiscard]] caf::expected<object_ref> get() const;

  /// Drops the reference now and leaves this empty.
  void reset() noexcept;

private:
  friend caf::expected<parked_ref> park(const object_ref& ref);

  parked_ref(std::shared_ptr<detail::store_impl> store, uint32_t slot,
             uint32_t holder, object_id id, uint64_t size) noexcept;

  std::shared_ptr<detail::store_impl> store_;
  uint32_t slot_ = 0;
  uint32_t holder_ = 0;
  object_id id_{};
  uint64_t size_ = 0;
};

} // namespace ferry::store
