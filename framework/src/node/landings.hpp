// landings: a node's places for bytes read straight from CAF's buffer.
//
// The node's read context (wire/read_context.hpp), with two parts:
//
// - Chunk landings. The puller registers the place of each chunk it asks
//   for (a frame and an offset) under a key of 64 random bits, which the
//   chunk request names; the reader of the `chunk_reply` copies the bytes
//   into that place and uses the key up. The table holds frames weakly: a
//   frame given up meanwhile is not kept.
// - Import landing. The bytes of `inline_handle` frames (store objects from
//   another host, small enough to travel with the message) go straight into
//   new sealed objects of this host's store, one copy less than reading
//   them into a buffer that decoding then copies. CAF reads messages ahead
//   of their delivery (18 MiB of 1 MiB messages in a stream, measured), and
//   a landed object cannot be spilled while its message holds it, so
//   landing everything would let messages not yet delivered fill the store
//   and make the decoding of others fail with store_full. Objects landed
//   and not yet delivered therefore take at most 1/`import_ahead_share` of
//   the store's capacity; beyond that (or without a store) frames are read
//   into memory and decoding copies them, naming the store's error if that
//   fails too.
//
// Thread-safety: every member function may be called from any thread. The
// chunk table is guarded by one mutex; the import target is published
// atomically and immutable once set.
#pragma once

#include "link/landing_buffer.hpp"
#include "wire/read_context.hpp"

#include "ferry/store/object_store.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <unordered_map>

namespace ferry::detail {

/// Share of the store's capacity that objects landed ahead of their
/// delivery may take (see the file comment).
inline constexpr uint64_t import_ahead_share = 8;

class landings final : public read_context {
public:
  landings();
  ~landings() override;

  // -- chunk landings ---------------------------------------------------------

  /// Registers the place of one chunk of `target` for a `chunk_reply` to land
  /// in; returns its key (never 0).
  uint64_t add(std::weak_ptr<landing_buffer> target, uint64_t offset,
               uint64_t length);

  /// Forgets landing `key`; nothing happens when it was used or is unknown.
  void remove(uint64_t key);

  bool land_chunk(uint64_t key, std::span<const std::byte> bytes) override;

  // -- import landing ---------------------------------------------------------

  /// Lands the inline handles of messages read from now on in `store`.
  void import_into(store::object_store store);

  landed_import land_import(std::span<const std::byte> bytes) override;

private:
  struct chunk_place {
    std::weak_ptr<landing_buffer> target;
    uint64_t offset = 0;
    uint64_t length = 0;
  };

  struct import_target {
    store::object_store store;
    /// Bytes of landed objects whose messages are still in CAF's pipeline
    /// (or held back behind a pulled message): not yet delivered.
    std::shared_ptr<std::atomic<uint64_t>> ahead;
    uint64_t limit = 0;
  };

  std::mutex mtx_;
  std::unordered_map<uint64_t, chunk_place> chunks_;
  std::random_device random_;
  std::atomic<std::shared_ptr<import_target>> import_;
};

} // namespace ferry::detail
