// Counted handles to sealed store objects.
//
// An `object_ref` holds one reference to an immutable object in a store and
// gives read-only access to its bytes, which stay in shared memory: `bytes()`
// is a view, no byte is ever copied. The count lives in shared memory, so the
// handles of every process on the host count together; when the last
// reference anywhere drops (handles, in-transit tickets, pins), the object's
// memory returns to the store.
//
// Usage:
//
//     auto store = ferry::store::object_store::attach({});
//     auto ref = store->put(std::as_bytes(std::span{text}));
//     auto copy = *ref;          // one more reference
//     use(copy.bytes());         // view into shared memory
//
// While an `object_ref` lives, its object stays resident: it is never spilled
// and `bytes()` stays valid and unchanged. The handle keeps the process's
// attachment to the store alive as well. To keep an object without keeping
// it in memory, hold a `parked_ref` (see parked_ref.hpp): the store may then
// spill it and restores it on the next `get`.
//
// Crossing a process boundary: inside a message, the framework opens an
// `in_band_scope` and serializes the handle; the serialization hook exports a
// `transfer_ticket` (one reference owned by the sender, marked in transit)
// and the receiver's deserialization redeems it, taking that reference over.
// Serialized anywhere else ("out of band"), the handle pins its object until
// this process exits or calls `unpin`, with one warning; with
// `store_config::allow_out_of_band_ref_serialization = false` it fails with
// `errc::out_of_band_ref` instead. Sent to another host, the framework copies
// the object into that host's store and the receiver's handle points there
// (see `import_scope`).
//
// Thread-safety: distinct `object_ref` instances may be used from any threads
// at once, including copies of the same handle (count updates take the
// store's robust inter-process lock). One instance is not synchronized:
// don't assign to it while another thread reads it (like `std::shared_ptr`).
#pragma once

#include "ferry/store/detail/counted_hold.hpp"
#include "ferry/store/fwd.hpp"
#include "ferry/store/object_id.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/meta/type_name.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace ferry::store {

/// The serialized form of an `object_ref`: which store, which object, and
/// the transfer ticket (0 for a handle serialized out of band).
struct ref_wire {
  /// Token of the store (random, fixed at the store's creation).
  uint64_t store = 0;
  /// Object id; 0 for an empty handle.
  uint64_t object = 0;
  /// Ticket id; 0 unless the handle was serialized in band.
  uint64_t ticket = 0;
};

/// Describes `x` for CAF 0.17 inspectors.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ref_wire& x) {
  return f(caf::meta::type_name("ferry.store.ref_wire"), x.store, x.object,
           x.ticket);
}

/// Thrown by the cereal `save`/`load` members of `object_ref` and
/// `shared_array` (cereal archives cannot return errors). ferry's
/// serializers adapter catches it and returns `error()`. Code that wants no
/// exceptions calls `to_wire` / `from_wire`.
class ref_serialization_error : public std::runtime_error {
public:
  /// Wraps `err`; `what()` returns `render(err)`.
  explicit ref_serialization_error(caf::error err);

  /// Returns the wrapped error.
  const caf::error& error() const noexcept { return err_; }

private:
  caf::error err_;
};

/// Serializes `x`: inside an `in_band_scope` of `x`'s store it exports a
/// transfer ticket and registers it with the scope; anywhere else it pins the
/// object until this process exits (warning once per pin) or, with
/// `allow_out_of_band_ref_serialization = false`, fails with
/// `errc::out_of_band_ref`. An empty handle gives an all-zero wire.
[[nodiscard]] caf::expected<ref_wire> to_wire(const object_ref& x);

/// Makes a handle from its serialized form: inside an `import_scope` for its
/// store (a message from another host), a reference to the local copy;
/// otherwise redeems the ticket if there is one, or gets the (pinned) object.
/// The store must be attached by this process (`errc::store_not_attached`
/// otherwise).
[[nodiscard]] caf::expected<object_ref> from_wire(const ref_wire& x);

/// A counted handle to a sealed object. See the header comment.
class object_ref {
public:
  /// Constructs an empty handle.
  object_ref() noexcept = default;

  /// Adds a reference to the same object.
  object_ref(const object_ref& other) = default;

  /// Takes over `other`'s reference; `other` becomes empty.
  object_ref(object_ref&& other) noexcept = default;

  /// Adds a reference to `other`'s object, then drops this handle's.
  object_ref& operator=(const object_ref& other) = default;

  /// Drops this handle's reference and takes over `other`'s.
  object_ref& operator=(object_ref&& other) noexcept = default;

  /// Drops the reference; frees the object if it was the last one.
  ~object_ref() = default;

  /// Returns true if the handle points to an object.
  explicit operator bool() const noexcept { return hold_.data() != nullptr; }

  /// Returns the object's id, or `object_id{0}` for an empty handle.
  object_id id() const noexcept { return hold_.id(); }

  /// Returns the object's size in bytes.
  uint64_t size() const noexcept { return hold_.size(); }

  /// Returns a read-only view of the object's bytes in shared memory. The
  /// view is valid while this handle lives. Empty for an empty handle.
  std::span<const std::byte> bytes() const noexcept {
    return {hold_.data(), static_cast<size_t>(hold_.size())};
  }

  /// Returns the number of references to the object on the whole host
  /// (handles of every process, tickets in transit, pins); 0 for an empty
  /// handle. A snapshot: other processes may change it at any time.
  [[nodiscard]] uint64_t ref_count() const;

  /// Adds a reference held by this process and marked in transit, and
  /// returns the ticket naming it. The reference lives until a process
  /// calls `object_store::redeem` (which takes it over) or
  /// `object_store::cancel`, or until this process exits.
  [[nodiscard]] caf::expected<transfer_ticket> export_in_band() const;

  /// Drops this process's out-of-band pin of the object.
  [[nodiscard]] caf::error unpin() const;

  /// Drops the reference now and leaves the handle empty.
  void reset() noexcept { hold_.reset(); }

  /// Serializes the handle for cereal (see `to_wire`).
  /// @throws ref_serialization_error
  template <class Archive>
  void save(Archive& ar) const {
    auto wire = to_wire(*this);
    if (!wire)
      throw ref_serialization_error{std::move(wire.error())};
    ar(wire->store, wire->object, wire->ticket);
  }

  /// Deserializes a handle for cereal (see `from_wire`).
  /// @throws ref_serialization_error
  template <class Archive>
  void load(Archive& ar) {
    ref_wire wire;
    ar(wire.store, wire.object, wire.ticket);
    auto ref = from_wire(wire);
    if (!ref)
      throw ref_serialization_error{std::move(ref.error())};
    *this = std::move(*ref);
  }

private:
  friend class detail::store_impl;
  friend caf::expected<ref_wire> to_wire(const object_ref& x);
  friend caf::expected<parked_ref> park(const object_ref& ref);

  /// Takes over `hold`, a count of kind `handle` its maker added.
  explicit object_ref(detail::counted_hold hold) noexcept
    : hold_(std::move(hold)) {
    // nop
  }

  /// The handle count (see detail/counted_hold.hpp).
  detail::counted_hold hold_{detail::counted_hold::kind::handle};
};

/// Returns `x` rendered as `object_ref(<id>, <size> bytes)`.
std::string to_string(const object_ref& x);

/// Describes `x` for CAF 0.17 inspectors: serializers run `to_wire`,
/// deserializers `from_wire` (errors become the inspector's result); other
/// inspectors (e.g. `to_string`) see the id and size without side effects.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, object_ref& x) {
  constexpr auto name = caf::meta::type_name("ferry.store.object_ref");
  if constexpr (std::is_same_v<typename Inspector::result_type, caf::error>) {
    if constexpr (Inspector::reads_state) {
      auto wire = to_wire(x);
      if (!wire)
        return std::move(wire.error());
      return f(name, wire->store, wire->object, wire->ticket);
    } else {
      ref_wire wire;
      if (auto err = f(name, wire.store, wire.object, wire.ticket))
        return err;
      auto ref = from_wire(wire);
      if (!ref)
        return std::move(ref.error());
      x = std::move(*ref);
      return caf::none;
    }
  } else {
    auto id = static_cast<uint64_t>(x.id());
    auto size = x.size();
    return f(name, id, size);
  }
}

} // namespace ferry::store
