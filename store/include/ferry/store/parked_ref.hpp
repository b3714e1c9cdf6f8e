// References that let the store spill their object.
//
// An `object_ref` keeps its object in memory: it gives a raw view of shared
// memory, so the object cannot move while the handle lives. A `parked_ref`
// is a counted reference without that view, like a Ray ObjectRef held
// without `ray.get`: it keeps the object alive (it counts like a handle, in
// shared memory, reclaimed if the process dies) but lets the store spill the
// object to disk when memory is short. `get()` returns an `object_ref`,
// restoring the object from its spill file first if needed. A restore needs
// room in memory: the store spills other objects for it, and `get()` fails
// with `store_full` when it cannot (memory full of objects being written or
// viewed by live handles, or the spill files at their bound).
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
// Serialized, a parked reference is the handle of its object (`object_ref`'s
// form): serializing one brings its object back into memory if it was
// spilled (`get`), and the receiver gets a parked reference to the object it
// received (`park`).
//
// Thread-safety: like `object_ref` (distinct instances from any threads; one
// instance is not synchronized).
#pragma once

#include "ferry/store/detail/counted_hold.hpp"
#include "ferry/store/fwd.hpp"
#include "ferry/store/object_id.hpp"
#include "ferry/store/object_ref.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

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
  parked_ref(const parked_ref& other) = default;

  /// Takes over `other`'s reference; `other` becomes empty.
  parked_ref(parked_ref&& other) noexcept = default;

  parked_ref& operator=(const parked_ref& other) = default;
  parked_ref& operator=(parked_ref&& other) noexcept = default;

  /// Drops the reference; frees the object (and its spill file) if it was
  /// the last one.
  ~parked_ref() = default;

  /// Returns true if the reference points to an object.
  explicit operator bool() const noexcept { return hold_.store() != nullptr; }

  /// Returns the object's id, or `object_id{0}` when empty.
  object_id id() const noexcept { return hold_.id(); }

  /// Returns the object's size in bytes.
  uint64_t size() const noexcept { return hold_.size(); }

  /// Returns a handle to the object, restoring it from its spill file if it
  /// was spilled. Fails with `store_full` when no room can be made for it
  /// now (every resident object is being written or viewed by a live
  /// handle, or spilling one would pass the spill bound), `spill_failed`
  /// when a spill file cannot be read or written or /dev/shm cannot supply
  /// the object's pages, `invalid_handle` for an empty reference.
  [[nodiscard]] caf::expected<object_ref> get() const;

  /// Drops the reference now and leaves this empty.
  void reset() noexcept { hold_.reset(); }

  /// Serializes the reference as its object's handle (cereal).
  /// @throws ref_serialization_error
  template <class Archive>
  void save(Archive& ar) const {
    auto ref = handle();
    if (!ref)
      throw ref_serialization_error{std::move(ref.error())};
    ref->save(ar);
  }

  /// Deserializes a reference from a handle (cereal).
  /// @throws ref_serialization_error
  template <class Archive>
  void load(Archive& ar) {
    object_ref ref;
    ref.load(ar);
    auto parked = from_handle(ref);
    if (!parked)
      throw ref_serialization_error{std::move(parked.error())};
    *this = std::move(*parked);
  }

  /// Returns the handle of the object, restoring it if it was spilled (an
  /// empty handle for an empty reference): what a parked reference is when
  /// serialized.
  [[nodiscard]] caf::expected<object_ref> handle() const;

  /// Returns a parked reference to `ref`'s object (an empty one for an
  /// empty handle): what a serialized parked reference becomes.
  [[nodiscard]] static caf::expected<parked_ref>
  from_handle(const object_ref& ref);

  /// Describes `x` for CAF 0.17 inspectors (as its object's handle).
  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f, parked_ref& x) {
    if constexpr (std::is_same_v<typename Inspector::result_type, caf::error>) {
      if constexpr (Inspector::reads_state) {
        auto ref = x.handle();
        if (!ref)
          return std::move(ref.error());
        return inspect(f, *ref);
      } else {
        object_ref ref;
        if (auto err = inspect(f, ref))
          return err;
        auto parked = from_handle(ref);
        if (!parked)
          return std::move(parked.error());
        x = std::move(*parked);
        return caf::none;
      }
    } else {
      auto id = static_cast<uint64_t>(x.id());
      auto size = x.size();
      return f(caf::meta::type_name("ferry.store.parked_ref"), id, size);
    }
  }

private:
  friend caf::expected<parked_ref> park(const object_ref& ref);

  /// Takes over `hold`, a count of kind `parked` its maker added.
  explicit parked_ref(detail::counted_hold hold) noexcept
    : hold_(std::move(hold)) {
    // nop
  }

  /// The parked count (see detail/counted_hold.hpp).
  detail::counted_hold hold_{detail::counted_hold::kind::parked};
};

} // namespace ferry::store
