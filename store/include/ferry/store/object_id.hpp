// Object ids and transfer tickets: the plain values that name store objects.
//
// An `object_id` names one object of one store. Ids are unique in a store's
// life and never reused: they grow strictly with every `create`, and an id
// whose object was freed keeps answering `object_not_found`. A
// `transfer_ticket` names one reference that is in transit between processes
// (see `object_ref::export_in_band`). Both are trivially copyable values that
// any thread may use freely; they carry no ownership by themselves.
#pragma once

#include "ferry/store/fwd.hpp"

#include <caf/meta/type_name.hpp>

#include <compare>
#include <cstdint>
#include <string>

namespace ferry::store {

/// Names one object of a store; `object_id{0}` names none.
enum class object_id : uint64_t {};

/// Returns the decimal rendering of `x`.
std::string to_string(object_id x);

/// One reference to an object that travels between processes inside a
/// message. The exporting process holds the reference (marked in transit)
/// until the importer redeems the ticket or someone cancels it.
struct transfer_ticket {
  /// The object the reference points to.
  object_id object{};
  /// The ticket's own id, unique in the store's life; 0 means no ticket.
  uint64_t id = 0;

  friend bool operator==(const transfer_ticket&,
                         const transfer_ticket&) = default;
};

/// Returns `x` rendered as `ticket(<id> for object <object>)`.
std::string to_string(const transfer_ticket& x);

/// Describes `x` for CAF 0.17 inspectors.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, transfer_ticket& x) {
  return f(caf::meta::type_name("ferry.store.transfer_ticket"), x.object, x.id);
}

} // namespace ferry::store
