// The framework's checked locking: the annotated mutex and lock holders of
// ferry/serializers/detail/thread_safety.hpp under the framework's names.
//
// Every mutex in framework/src is a `ferry::detail::mutex`, every member it
// guards says so with FERRY_GUARDED_BY, and every function that expects it
// held says FERRY_REQUIRES; clang's -Wthread-safety checks them in CI. The
// lock order is listed in docs/architecture.md ("Locks and their order").
#pragma once

#include "ferry/serializers/detail/thread_safety.hpp"

namespace ferry::detail {

using mutex = serializers::detail::mutex;
using lock_guard = serializers::detail::lock_guard;
using unique_lock = serializers::detail::unique_lock;

} // namespace ferry::detail
