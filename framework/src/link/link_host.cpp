// link_host: the interfaces' out-of-line parts (see link/link_host.hpp).
#include "link/link_host.hpp"

namespace ferry::detail {

link_host::~link_host() = default;

} // namespace ferry::detail
