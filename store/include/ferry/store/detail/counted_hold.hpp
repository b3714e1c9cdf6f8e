// counted_hold: one counted reference of this process to a store object, the
// member that `object_ref`, `parked_ref` and `object_builder` share. Not API.
//
// A hold names its object (store attachment, slot, holder entry, id, size,
// and the payload where the owner views it) and owns one count in the
// store's shared tables. Its `kind`, fixed at construction, says which count
// that is, what a copy adds and what `reset` gives back:
//
// - `handle` (`object_ref`): a handle count; a copy adds one
//   (`store_impl::add_handle`), reset drops one (`drop_handle`).
// - `parked` (`parked_ref`): a parked count; a copy adds one (`add_parked`),
//   reset drops one (`drop_parked`). No payload: `data()` is null.
// - `builder` (`object_builder`): the handle count of an unsealed object;
//   move-only (its owner deletes copying; copying such a hold gives an empty
//   one), reset abandons the object (`store_impl::abandon`), `forget` lets go
//   of it once `seal` handed the count to an `object_ref`.
//
// Moving takes the count over and leaves the source empty: no store, id 0,
// data null, size 0, its kind unchanged. Assignment keeps the target's kind
// (its owner assigns only holds of its own kind). An empty hold counts
// nothing, and copying or resetting it touches no store.
//
// The member functions that count are defined in store/src/counted_hold.cpp,
// where `store_impl` is known.
//
// Thread-safety: as its owners': distinct holds may be used from any threads
// at once (count updates take the store's inter-process lock); one hold is
// not synchronized.
#pragma once

#include "ferry/store/fwd.hpp"
#include "ferry/store/object_id.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ferry::store::detail {

class counted_hold {
public:
  /// Which count a hold owns (see the header comment).
  enum class kind : uint8_t { handle, parked, builder };

  /// Constructs an empty hold of kind `k`.
  explicit counted_hold(kind k) noexcept : kind_(k) {
    // nop
  }

  /// Takes over one count of kind `k` that the caller already added to the
  /// store's tables for object `id` (slot `slot`, holder entry `holder`).
  counted_hold(kind k, std::shared_ptr<store_impl> store, uint32_t slot,
               uint32_t holder, object_id id, std::byte* data,
               uint64_t size) noexcept;

  /// Adds one count of the same kind to `other`'s object (none if empty).
  counted_hold(const counted_hold& other);

  /// Takes over `other`'s count; `other` becomes empty.
  counted_hold(counted_hold&& other) noexcept;

  /// Adds a count to `other`'s object, then gives back this hold's.
  counted_hold& operator=(const counted_hold& other);

  /// Gives back this hold's count and takes over `other`'s.
  counted_hold& operator=(counted_hold&& other) noexcept;

  /// Gives back the count.
  ~counted_hold();

  /// Gives back the count now (see the header comment) and becomes empty.
  void reset() noexcept;

  /// Becomes empty without giving back the count, which another owner took
  /// over (a builder's, after `seal`).
  void forget() noexcept;

  kind which() const noexcept { return kind_; }

  /// Returns the store attachment, or null for an empty hold.
  const std::shared_ptr<store_impl>& store() const noexcept { return store_; }

  uint32_t slot() const noexcept { return slot_; }

  uint32_t holder() const noexcept { return holder_; }

  /// Returns the object's id, or `object_id{0}` for an empty hold.
  object_id id() const noexcept { return id_; }

  /// Returns the payload in shared memory; null for an empty or parked hold.
  std::byte* data() const noexcept { return data_; }

  /// Returns the object's size in bytes, or 0 for an empty hold.
  uint64_t size() const noexcept { return size_; }

private:
  /// Takes `other`'s members and leaves it empty.
  void take(counted_hold& other) noexcept;

  kind kind_;
  std::shared_ptr<store_impl> store_;
  uint32_t slot_ = 0;
  uint32_t holder_ = 0;
  object_id id_{};
  std::byte* data_ = nullptr;
  uint64_t size_ = 0;
};

} // namespace ferry::store::detail
