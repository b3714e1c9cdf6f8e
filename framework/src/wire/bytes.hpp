// wire_bytes: a run of bytes inside a wire message.
//
// On the sending side a `wire_bytes` is a view of memory owned elsewhere (a
// payload frame, kept alive by `keep_alive`), which a frame being sent
// views in turn (wire/out_frame.hpp): nothing copies it before the socket
// or the ring. On the receiving side it owns a buffer that a reader filled
// after checking the claimed length against the frame it read, so a hostile
// length never allocates; decoders may take a sole owner's buffer over.
//
// Thread-safety: a value type; distinct objects may be used by distinct
// threads. Copies share the bytes (immutable once made).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace ferry::detail {

class wire_bytes {
public:
  wire_bytes() = default;

  /// A view of `bytes`, kept valid by `keep_alive`.
  wire_bytes(std::span<const std::byte> bytes,
             std::shared_ptr<const void> keep_alive)
    : view_(bytes), keep_alive_(std::move(keep_alive)) {
    // nop
  }

  /// Owns `bytes`; a large buffer goes back to the vector pool when the last
  /// frame sharing it is gone (unless a decoder took it over).
  explicit wire_bytes(std::vector<std::byte> bytes);

  /// Owns a copy of `bytes` in fresh memory (copied without zero-filling).
  static wire_bytes copy_of(std::span<const std::byte> bytes);

  /// Returns an owned buffer of `n` bytes for a reader to fill (from the
  /// vector pool when it keeps one that large). REQUIRES: the caller writes
  /// every byte before anyone reads them.
  static std::vector<std::byte> unfilled(size_t n);

  /// Returns the bytes.
  std::span<const std::byte> bytes() const { return view_; }

  /// Returns the number of bytes.
  size_t size() const { return view_.size(); }

  /// Returns what keeps the bytes alive (shared with frames made from them).
  const std::shared_ptr<const void>& keep_alive() const { return keep_alive_; }

  /// Returns whether this object owns its buffer and nothing else shares it
  /// (then `take` moves the bytes out without a copy).
  bool sole_owner() const {
    // owned_ and keep_alive_ are two references to the same buffer.
    return owned_ != nullptr && owned_.use_count() == 2;
  }

  /// Moves the bytes out (requires `sole_owner()`); leaves this empty.
  std::vector<std::byte> take();

private:
  std::span<const std::byte> view_;
  std::shared_ptr<const void> keep_alive_;
  std::shared_ptr<std::vector<std::byte>> owned_;
};

} // namespace ferry::detail
