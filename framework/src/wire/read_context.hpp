// read_context: where the reading of a wire message may put bytes directly.
//
// CAF reads ferry's wire types on the middleman's thread, knowing nothing
// of ferry's nodes. Two kinds of bytes are worth copying straight from CAF's
// receive buffer into their final place instead of into a buffer first:
// - the bytes of an `inline_handle` frame (a small store object from another
//   host), into a new object of this host's store (`land_import`);
// - the bytes of a `chunk_reply`, into the frame being pulled
//   (`land_chunk`).
// A node owns a read context (node/landings.hpp) and binds it to its
// `node_config` (a `read_context_slot`), which the reading actor system
// holds; `read_context_of` finds it from a deserializer. A system without
// one (a plain CAF system, or a node's once it stopped) reads such bytes
// into memory, and decoding or the puller copies them.
//
// Thread-safety: implementations are called by the thread reading CAF's
// messages while the node's own threads use them; they synchronise
// themselves. A bound context outlives every read of its actor system.
#pragma once

#include "ferry/detail/read_context_slot.hpp"
#include "ferry/store/object_ref.hpp"

#include <caf/deserializer.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace ferry::detail {

/// An object of this host's store that a wire message's bytes landed in.
struct landed_import {
  /// The sealed object.
  store::object_ref ref;
  /// Keeps the object counted against the landing budget until the frame
  /// viewing it is gone; null when nothing landed.
  std::shared_ptr<const void> keep_alive;
};

class read_context {
public:
  virtual ~read_context();

  /// Copies `bytes`, the data of an `inline_handle` frame, into a new sealed
  /// store object. Returns an empty result, copying nothing, when the store
  /// cannot or should not take them now (the frame is then read into
  /// memory and decoding copies it into the store).
  virtual landed_import land_import(std::span<const std::byte> bytes) = 0;

  /// Copies `bytes`, the data of a `chunk_reply` naming landing `key`, into
  /// their place when `key` is registered for exactly that many bytes and
  /// its frame is still wanted; uses the landing up. Returns whether.
  virtual bool land_chunk(uint64_t key, std::span<const std::byte> bytes)
    = 0;
};

/// Returns the read context bound to the config of the actor system reading
/// from `source`, or null.
read_context* read_context_of(caf::deserializer& source);

/// Binds `ctx` to `cfg` (an actor system config that is a
/// `read_context_slot`) for as long as this object lives: the reading of
/// wire messages in actor systems built from `cfg` lands bytes through it.
/// A node holds one, declared before its actor system, so the binding ends
/// only after the system has stopped reading.
class read_context_binding {
public:
  read_context_binding(read_context_slot& cfg, read_context* ctx);
  ~read_context_binding();

  read_context_binding(const read_context_binding&) = delete;
  read_context_binding& operator=(const read_context_binding&) = delete;

  /// Returns the context bound to `cfg`, or null.
  static read_context* bound(const read_context_slot& cfg);

private:
  read_context_slot& cfg_;
};

} // namespace ferry::detail
