// Marks serialization that happens on ferry's message path.
//
// While an `in_band_scope` for a store is open on a thread, serializing an
// `object_ref` of that store (cereal `save`, CAF `inspect`, `to_wire`)
// exports a `transfer_ticket` instead of pinning the object, and the scope
// collects the tickets. The framework opens one around encoding a message,
// sends the message, and keeps the tickets until the receiver confirms; if
// the link dies or the receiver refuses the message it calls
// `object_store::cancel` for each. Deserialization needs no scope: a wire
// with a ticket is always redeemed.
//
// Usage (framework side):
//
//     ferry::store::in_band_scope scope{store};
//     auto payload = encode(message);       // object_refs become tickets
//     auto tickets = scope.take_tickets();  // cancel these if not delivered
//
// Thread-safety: scopes are per thread (thread-local) and nest; the innermost
// one is active. A scope must be destroyed on the thread that created it, in
// reverse order of creation.
#pragma once

#include "ferry/store/fwd.hpp"
#include "ferry/store/object_id.hpp"

#include <memory>
#include <vector>

namespace ferry::store {

/// RAII marker of in-band serialization. See the header comment.
class in_band_scope {
public:
  /// Opens a scope for `store` on the calling thread.
  /// REQUIRES: `store` is attached.
  explicit in_band_scope(const object_store& store);

  in_band_scope(const in_band_scope&) = delete;
  in_band_scope& operator=(const in_band_scope&) = delete;

  /// Closes the scope. Tickets not taken stay in transit: the caller still
  /// owns them (redeem or cancel them).
  ~in_band_scope();

  /// Returns the tickets exported in this scope so far.
  const std::vector<transfer_ticket>& tickets() const noexcept {
    return tickets_;
  }

  /// Returns and forgets the tickets exported so far.
  [[nodiscard]] std::vector<transfer_ticket> take_tickets() noexcept;

  /// Returns the innermost open scope of the calling thread, or null.
  static in_band_scope* current() noexcept;

  /// Returns the store this scope is for.
  const detail::store_impl* store() const noexcept { return store_.get(); }

  /// Records `ticket` (called by the serialization hook).
  void add(const transfer_ticket& ticket);

private:
  std::shared_ptr<detail::store_impl> store_;
  std::vector<transfer_ticket> tickets_;
  in_band_scope* previous_;
};

} // namespace ferry::store
