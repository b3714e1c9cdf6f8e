#include "ferry/store/object_id.hpp"

namespace ferry::store {

std::string to_string(object_id x) {
  return std::to_string(static_cast<uint64_t>(x));
}

std::string to_string(const transfer_ticket& x) {
  return "ticket(" + std::to_string(x.id) + " for object " +
         to_string(x.object) + ")";
}

} // namespace ferry::store
