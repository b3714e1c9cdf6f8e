// read_context_slot: where an actor system's config holds the read context
// of the node running on it. Not API.
//
// CAF reads ferry's wire types knowing only the actor system that reads
// them; the system knows its config. A config that derives from this slot
// (`node_config` does) can hold a pointer to the running node's read
// context (framework/src/wire/read_context.hpp), which the reading then
// finds by a cross-cast from the system's config.
//
// Thread-safety: the pointer is atomic; it is set before the node's actor
// system starts and cleared after it stopped.
#pragma once

#include <atomic>

namespace ferry::detail {

class read_context;
class read_context_binding;

class read_context_slot {
public:
  virtual ~read_context_slot() = default;

private:
  friend class read_context_binding;
  std::atomic<read_context*> read_context_{nullptr};
};

} // namespace ferry::detail
