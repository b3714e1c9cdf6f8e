// Error codes of ferry::store.
//
// Every fallible call of the store returns `caf::expected<T>` or `caf::error`.
// Errors built from `errc` carry the category atom `ferry_sto` and a context
// string naming the store, the object id and the figures involved (capacity,
// bytes used, largest free block) and how to fix it. Render them with
// `ferry::store::render()`. Exceptions from Boost.Interprocess never leave the
// store: they are caught at the call and turned into these errors, keeping the
// original message.
#pragma once

#include <caf/error.hpp>
#include <caf/make_message.hpp>

#include <cstdint>
#include <string>

namespace ferry::store {

/// Error codes of the store library (category `ferry_sto`).
enum class errc : uint8_t {
  /// Not an error.
  none = 0,
  /// The shared-memory segment could not be created or opened.
  segment_unavailable,
  /// The segment exists but is not a ferry store of this layout version.
  incompatible_segment,
  /// The configured size is too small to hold the store's own bookkeeping.
  segment_too_small,
  /// An allocation does not fit, and spilling is off or exhausted.
  store_full,
  /// No object with this id exists (never created, or freed).
  object_not_found,
  /// The object exists but is not sealed yet.
  object_not_sealed,
  /// The operation needs a writable (unsealed) buffer.
  object_already_sealed,
  /// Writing or reading a spill file failed.
  spill_failed,
  /// A handle was serialized outside ferry's message path in strict mode.
  out_of_band_ref,
  /// The handle is empty (default-constructed or moved from).
  invalid_handle,
  /// The requested size is not valid (zero where not allowed, or too large).
  invalid_size,
  /// A fixed-size table of the segment (objects, holders, tickets or
  /// processes) has no free entry left.
  table_full,
  /// No transfer ticket with this id exists (redeemed, cancelled or reaped).
  ticket_not_found,
  /// A serialized handle names a store that this process has not attached.
  store_not_attached,
  /// The object is not pinned by this process.
  not_pinned,
  /// The store configuration is not valid (e.g. a name with a slash).
  invalid_config,
  /// The segment's robust lock could not be taken or made consistent.
  lock_failed,
  /// A handle read from another host's message names a store other than
  /// that host's (this host's, say): only objects the message carried
  /// resolve.
  foreign_handle,
  /// The segment was created in another PID namespace: all processes of a
  /// store must share one, since the store tells live from dead by pid.
  foreign_pid_namespace,
};

/// Returns the name of `x`, e.g. `"store_full"`.
std::string to_string(errc x);

/// Returns `x` rendered for humans: category, code name and context. Falls
/// back to `caf::to_string` for errors of other categories.
std::string render(const caf::error& x);

} // namespace ferry::store

CAF_ERROR_CODE_ENUM(ferry::store::errc, "ferry_sto")
