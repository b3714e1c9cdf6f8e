// Sealing builders; see object_builder.hpp.
#include "ferry/store/object_builder.hpp"

#include "ferry/store/errc.hpp"

#include "store_impl.hpp"

#include <caf/make_message.hpp>

namespace ferry::store {

caf::expected<object_ref> object_builder::seal() {
  if (!hold_.store())
    return caf::make_error(errc::invalid_handle,
                           "cannot seal an empty object_builder (moved from "
                           "or already sealed)");
  auto ref = hold_.store()->seal(hold_.slot(), hold_.holder(), hold_.id());
  if (ref)
    hold_.forget(); // the handle took over the builder's reference
  return ref;
}

} // namespace ferry::store
