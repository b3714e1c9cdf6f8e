// thread_lease: scratch space a thread reuses from one call to the next.
//
// A link encodes and decodes many small messages; a payload or a frame list
// built fresh for each costs allocations that a value kept by the thread
// does not (its vectors keep their capacity). A lease hands out the
// thread's value of type `T`, and on release empties it with `Reset` (which
// must let go of everything the value refers to, keeping only capacity). A
// lease taken while the thread's value is leased already (a call nested in
// another on the same thread) gets a fresh value of its own.
//
// Thread-safety: each thread has its own value; a lease is used by the
// thread that took it.
#pragma once

namespace ferry::detail {

template <class T, void (*Reset)(T&)>
class thread_lease {
public:
  thread_lease() : owned_(!slot().busy) {
    if (owned_)
      slot().busy = true;
  }

  thread_lease(const thread_lease&) = delete;
  thread_lease& operator=(const thread_lease&) = delete;

  ~thread_lease() {
    if (!owned_)
      return;
    Reset(slot().value);
    slot().busy = false;
  }

  T& get() noexcept { return owned_ ? slot().value : own_; }

private:
  struct state {
    T value;
    bool busy = false;
  };

  static state& slot() noexcept {
    thread_local state x;
    return x;
  }

  bool owned_;
  T own_;
};

} // namespace ferry::detail
