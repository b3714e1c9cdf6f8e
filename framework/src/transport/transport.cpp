// transport: the interface's out-of-line parts (see transport/transport.hpp).
#include "transport/transport.hpp"

namespace ferry::detail {

namespace {

thread_local bool reads_frames = false;

} // namespace

transport::~transport() = default;

void transport::await_room(uint64_t) {
  // nop: a connection keeps what the socket does not take.
}

bool may_wait() noexcept {
  return !reads_frames;
}

void forbid_waiting() noexcept {
  reads_frames = true;
}

} // namespace ferry::detail
