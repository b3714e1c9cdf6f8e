// landings: where the bytes of inline store handles land on this node.
//
// The bytes of `inline_handle` frames (store objects from another host,
// small enough to travel with their message) go straight into new objects
// of this host's store as the frame is read (wire/message.hpp,
// `import_landing`), one copy less than reading them into a buffer that
// decoding then copies. A connection reads messages ahead of their
// delivery (the frames behind a message being pulled, a stream's window),
// and a landed object cannot be spilled while its message holds it, so
// landing everything would let messages not yet delivered fill the store
// and make the decoding of others fail with store_full. Objects landed and
// not yet delivered therefore take at most 1/`import_ahead_share` of the
// store's capacity; beyond that (or without a store) frames are read into
// memory and decoding copies them, naming the store's error if that fails
// too.
//
// Thread-safety: every member function may be called from any thread. The
// import target is published atomically and immutable once set.
#pragma once

#include "wire/message.hpp"

#include "ferry/store/object_store.hpp"

#include <atomic>
#include <cstdint>
#include <memory>

namespace ferry::detail {

/// Share of the store's capacity that objects landed ahead of their
/// delivery may take (see the file comment).
inline constexpr uint64_t import_ahead_share = 8;

class landings final : public import_landing {
public:
  landings();
  ~landings() override;

  /// Lands the inline handles of messages read from now on in `store`.
  void import_into(store::object_store store);

  std::optional<place> begin(uint64_t size) override;

  landed_import seal(place&& filled) override;

private:
  struct import_target {
    store::object_store store;
    /// Bytes of landed objects whose messages are not yet delivered.
    std::shared_ptr<std::atomic<uint64_t>> ahead;
    uint64_t limit = 0;
  };

  std::atomic<std::shared_ptr<import_target>> import_;
};

} // namespace ferry::detail
