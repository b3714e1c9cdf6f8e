// A tiny helper for the samples: remove the sample's host store when `main`
// returns, on every path, so a run leaves nothing behind in /dev/shm.
#pragma once

#include "ferry/store/object_store.hpp"

#include <string>

namespace sample {

/// Removes the store named `name` (if any) when destroyed.
struct remove_store_at_exit {
  std::string name;
  ~remove_store_at_exit() {
    if (!name.empty())
      static_cast<void>(ferry::store::object_store::remove(name));
  }
};

} // namespace sample
