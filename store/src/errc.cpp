#include "ferry/store/errc.hpp"

#include "ferry/store/detail/error_render.hpp"

#include <caf/message.hpp>

namespace ferry::store {

std::string to_string(errc x) {
  switch (x) {
  case errc::none:
    return "none";
  case errc::segment_unavailable:
    return "segment_unavailable";
  case errc::incompatible_segment:
    return "incompatible_segment";
  case errc::segment_too_small:
    return "segment_too_small";
  case errc::store_full:
    return "store_full";
  case errc::object_not_found:
    return "object_not_found";
  case errc::object_not_sealed:
    return "object_not_sealed";
  case errc::object_already_sealed:
    return "object_already_sealed";
  case errc::spill_failed:
    return "spill_failed";
  case errc::out_of_band_ref:
    return "out_of_band_ref";
  case errc::invalid_handle:
    return "invalid_handle";
  case errc::invalid_size:
    return "invalid_size";
  case errc::table_full:
    return "table_full";
  case errc::ticket_not_found:
    return "ticket_not_found";
  case errc::store_not_attached:
    return "store_not_attached";
  case errc::not_pinned:
    return "not_pinned";
  case errc::invalid_config:
    return "invalid_config";
  case errc::lock_failed:
    return "lock_failed";
  case errc::foreign_handle:
    return "foreign_handle";
  case errc::foreign_pid_namespace:
    return "foreign_pid_namespace";
  }
  return "errc(" + std::to_string(static_cast<int>(x)) + ")";
}

std::string render(const caf::error& x) {
  if (!x)
    return caf::to_string(x); // "none": CAF's accessors need an error
  if (x.category() != caf::atom("ferry_sto"))
    return caf::to_string(x);
  return detail::render_error(x, "ferry_sto",
                              to_string(static_cast<errc>(x.code())));
}

} // namespace ferry::store
