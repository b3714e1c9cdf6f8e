// thread_role: the calling thread's role (see thread_role.hpp).
#include "thread_role.hpp"

#include <utility>

namespace ferry::detail::thread_role {

namespace {

thread_local bool frame_reader = false;
thread_local bool delivers = false;

} // namespace

void reads_frames() noexcept {
  frame_reader = true;
}

bool may_wait_for_room() noexcept {
  return !frame_reader;
}

bool may_wait_for_credit() noexcept {
  return !frame_reader && !delivers;
}

delivering::delivering() noexcept : outer_(std::exchange(delivers, true)) {
  // nop
}

delivering::~delivering() {
  delivers = outer_;
}

} // namespace ferry::detail::thread_role
