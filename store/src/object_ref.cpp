// Counted handles and their serialized form; see object_ref.hpp.
#include "ferry/store/object_ref.hpp"

#include "ferry/store/errc.hpp"
#include "ferry/store/import_scope.hpp"
#include "ferry/store/in_band_scope.hpp"
#include "ferry/store/log.hpp"

#include "store_impl.hpp"

#include <caf/make_message.hpp>

namespace ferry::store {

ref_serialization_error::ref_serialization_error(caf::error err)
  : std::runtime_error(render(err)),
    err_(std::move(err)) {
  // nop
}

uint64_t object_ref::ref_count() const {
  auto& store = hold_.store();
  return store ? store->ref_count(hold_.slot(), hold_.id()) : 0;
}

caf::expected<transfer_ticket> object_ref::export_in_band() const {
  if (!hold_.store())
    return caf::make_error(errc::invalid_handle,
                           "cannot export an empty object_ref");
  return hold_.store()->export_ticket(hold_.slot(), hold_.id());
}

caf::error object_ref::unpin() const {
  if (!hold_.store())
    return caf::make_error(errc::invalid_handle,
                           "cannot unpin through an empty object_ref");
  return hold_.store()->unpin(hold_.id());
}

std::string to_string(const object_ref& x) {
  return "object_ref(" + to_string(x.id()) + ", " + std::to_string(x.size()) +
         " bytes)";
}

caf::expected<ref_wire> to_wire(const object_ref& x) {
  auto& hold = x.hold_;
  if (!hold.store())
    return ref_wire{};
  auto& store = *hold.store();
  auto* scope = in_band_scope::current();
  if (scope != nullptr && scope->store() == &store) {
    auto ticket = store.export_ticket(hold.slot(), hold.id());
    if (!ticket)
      return std::move(ticket.error());
    scope->add(*ticket);
    return ref_wire{store.token(), static_cast<uint64_t>(hold.id()),
                    ticket->id};
  }
  auto what = "object " + to_string(hold.id()) + " (" +
              std::to_string(hold.size()) + " bytes) of store '" +
              store.name() + "'";
  if (!store.allow_out_of_band())
    return caf::make_error(
      errc::out_of_band_ref,
      "an object_ref to " + what +
        " was serialized outside ferry's message path. The store cannot "
        "track a handle copied that way (the anti-pattern \"out-of-band "
        "serialization of an ObjectRef\"), so it cannot know when the "
        "object may be freed. Fix: send the object_ref inside a ferry "
        "message (it is then transferred in band), or copy the bytes out "
        "(bytes() / to_vector()), or allow it to pin the object until this "
        "process exits: store_config::allow_out_of_band_ref_serialization "
        "= true (a ferry node: drop --ferry.store.strict-refs, or set "
        "node_config::allow_out_of_band_ref_serialization = true)");
  auto first = store.pin(hold.slot(), hold.id());
  if (!first)
    return std::move(first.error());
  if (*first)
    log_warning("ferry.store warning: an object_ref to " + what +
                " was serialized outside ferry's message path "
                "(out-of-band serialization); the store cannot track that "
                "copy, so the object is pinned until this process exits or "
                "calls unpin(). Send handles inside ferry messages, or copy "
                "the bytes.");
  return ref_wire{store.token(), static_cast<uint64_t>(hold.id()), 0};
}

caf::expected<object_ref> from_wire(const ref_wire& x) {
  if (x.object == 0)
    return object_ref{};
  if (auto* imported = import_scope::find(x.store))
    return imported->resolve(object_id{x.object});
  if (auto* scope = import_scope::exclusive())
    return caf::make_error(
      errc::foreign_handle,
      "a serialized object_ref names object " + std::to_string(x.object) +
        " of store token " + std::to_string(x.store) +
        " in a message from another host (store token " +
        std::to_string(scope->token()) +
        "); such a message carries copies of the objects it names, and "
        "cannot name objects of this host's store or a third one. Send "
        "the object itself in the message (a shared_array or object_ref "
        "of the sender's store)");
  auto store = detail::store_impl::find_by_token(x.store);
  if (!store)
    return caf::make_error(
      errc::store_not_attached,
      "a serialized object_ref names object " + std::to_string(x.object) +
        " of a store (token " + std::to_string(x.store) +
        ") that this process has not attached; attach that store "
        "(object_store::attach) before deserializing");
  if (x.ticket != 0)
    return store->redeem(transfer_ticket{object_id{x.object}, x.ticket});
  return store->get(object_id{x.object});
}

} // namespace ferry::store
