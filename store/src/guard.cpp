// Taking the store lock and recovering from a dead owner; see guard.hpp.
#include "guard.hpp"

#include "fail.hpp"
#include "recovery.hpp"

#include "ferry/store/log.hpp"

#include <pthread.h>

#include <cerrno>

namespace ferry::store::detail {

guard::guard(object_tables& tables, uint32_t self)
  : tables_(tables),
    self_(self) {
  lock();
}

guard::~guard() {
  unlock();
  // Logged after unlocking: the hook may call into the store.
  if (recovered_)
    log_warning("ferry.store: store '" + tables_.name +
                "': a process died holding the store lock; the segment "
                "was repaired and the dead process reaped");
}

bool guard::lock() {
  auto rc = ::pthread_mutex_lock(&tables_.hdr->mutex);
  if (rc == EOWNERDEAD) {
    recover_locked(tables_, self_);
    rc = ::pthread_mutex_consistent(&tables_.hdr->mutex);
    recovered_ = true;
  }
  rc_ = rc;
  return rc_ == 0;
}

void guard::unlock() {
  if (rc_ == 0) {
    ::pthread_mutex_unlock(&tables_.hdr->mutex);
    rc_ = -1;
  }
}

caf::error guard::error() const {
  return fail(
    errc::lock_failed, "store '", tables_.name,
    "': cannot take the store lock: ", errno_text(rc_ < 0 ? EINVAL : rc_),
    "; remove the store with `ferry-store remove ", tables_.name,
    "` once no process uses it");
}

} // namespace ferry::store::detail
