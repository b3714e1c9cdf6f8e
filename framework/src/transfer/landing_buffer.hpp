// landing_buffer: the frame a pulled transfer is being written into.
//
// Where a pulled frame lands: an owned buffer of the frame's size, or a new
// object of this host's store (a store handle pulled from another host).
// Its chunks are copied in as they arrive, by the puller, or read straight
// from the socket into their `place` by the connection's reader
// (link/pending_asks.hpp), so every call locks. An owned frame ends as a
// `std::vector`, which a `raw` decoder adopts without a copy; a store object
// ends sealed.
//
// Thread-safety: every member function may be called from any thread.
#pragma once

#include "thread_safety.hpp"

#include "ferry/store/object_builder.hpp"
#include "ferry/store/object_ref.hpp"

#include <caf/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ferry::detail {

class landing_buffer {
public:
  /// Makes room for `size` bytes: a vector of the vector pool when it has
  /// one (holding an earlier message's bytes until the chunks overwrite
  /// them), else fresh address space (huge-page candidates when large).
  /// Fresh memory is zero-filled by `prepare`, as chunks are asked for, so
  /// what a peer merely claims costs address space, not memory. Throws
  /// std::bad_alloc when the address space is not there.
  explicit landing_buffer(uint64_t size);

  /// Lands the chunks in `object` (an unsealed store object).
  explicit landing_buffer(store::object_builder object);

  /// Makes the first `end` bytes writable before the chunk ending there is
  /// asked for (no effect on a store object or a part already prepared).
  /// REQUIRES: `end` is at most the frame's size.
  void prepare(uint64_t end);

  /// Writes `bytes` at `offset`. Returns false, writing nothing, when they
  /// reach beyond the prepared part of the frame.
  bool land(uint64_t offset, std::span<const std::byte> bytes);

  /// Returns the prepared part [`offset`, `offset` + `length`) to be
  /// written by one writer (a chunk's reader), or an empty span when it
  /// reaches beyond the prepared part. The bytes never move while this
  /// buffer lives (the owned frame's capacity is reserved up front).
  std::span<std::byte> place(uint64_t offset, uint64_t length);

  /// Returns the owned frame's bytes and leaves this empty. REQUIRES: every
  /// byte has landed (the puller takes a frame only then; before, a reused
  /// buffer still holds an earlier message's bytes).
  std::vector<std::byte> take();

  /// Returns the store object's bytes (empty for an owned frame, or once
  /// sealed). They stay where they are when the object is sealed.
  std::span<const std::byte> object_bytes();

  /// Seals the store object and returns its handle; this is empty after.
  caf::expected<store::object_ref> seal();

private:
  /// Where chunks land: the store object's bytes or the prepared part of
  /// the owned frame (empty once sealed or taken).
  std::span<std::byte> target() FERRY_REQUIRES(mtx_) {
    return object_ ? object_.bytes() : std::span<std::byte>{buf_};
  }

  mutex mtx_;
  /// The owned frame: its capacity is the frame's size, its size the part
  /// prepared so far.
  std::vector<std::byte> buf_ FERRY_GUARDED_BY(mtx_);
  store::object_builder object_ FERRY_GUARDED_BY(mtx_);
};

} // namespace ferry::detail
