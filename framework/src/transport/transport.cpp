// transport: the interface's out-of-line parts (see transport/transport.hpp).
#include "transport/transport.hpp"

namespace ferry::detail {

transport::~transport() = default;

void transport::await_room(uint64_t) {
  // nop: a connection keeps what the socket does not take.
}

} // namespace ferry::detail
