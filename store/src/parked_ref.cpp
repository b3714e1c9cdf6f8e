// Parked references; see parked_ref.hpp.
#include "ferry/store/parked_ref.hpp"

#include "ferry/store/errc.hpp"

#include "store_impl.hpp"

namespace ferry::store {

caf::expected<parked_ref> park(const object_ref& ref) {
  auto& hold = ref.hold_;
  if (!hold.store())
    return caf::make_error(errc::invalid_handle,
                           "cannot park an empty object_ref");
  auto holder = hold.store()->park(hold.slot(), hold.id());
  if (!holder)
    return std::move(holder.error());
  return parked_ref{detail::counted_hold{detail::counted_hold::kind::parked,
                                         hold.store(), hold.slot(), *holder,
                                         hold.id(), nullptr, hold.size()}};
}

caf::expected<object_ref> parked_ref::handle() const {
  if (!*this)
    return object_ref{};
  return get();
}

caf::expected<parked_ref> parked_ref::from_handle(const object_ref& ref) {
  if (!ref)
    return parked_ref{};
  return park(ref);
}

caf::expected<object_ref> parked_ref::get() const {
  if (!hold_.store())
    return caf::make_error(errc::invalid_handle,
                           "cannot get through an empty parked_ref");
  return hold_.store()->get(hold_.id());
}

} // namespace ferry::store
