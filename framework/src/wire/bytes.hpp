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
    : view_(bytes),
      keep_alive_(std::move(keep_alive)) {
    // nop
  }

  /// Owns `bytes`; a large buffer goes back to the vector pool when the last
  /// frame sharing it is gone (unless a decoder took it over).
  explicit wire_bytes(std::vector<std::byte> bytes);

  /// Owns a copy of `bytes` in fresh memory (copied without zero-filling).
  static wire_bytes copy_of(std::span<const std::byte> bytes);

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

/// A buffer of a claimed length that a reader fills front to back, taking
/// memory only as the bytes arrive: the whole length is reserved at once
/// (address space), and the part the reader may write next reaches at most
/// `step` bytes beyond what it filled, zero-filled just before (the page
/// faults happen there, never for bytes a peer merely claimed). A vector of
/// the vector pool, already faulted in, is used whole when it has one that
/// large.
class filling_buffer {
public:
  /// Bytes the writable part reaches beyond what is filled.
  static constexpr size_t step = size_t{1} << 20;

  /// A buffer for `n` bytes. Throws std::bad_alloc (or std::length_error)
  /// when the address space is not there.
  explicit filling_buffer(size_t n);

  /// Returns where the next bytes go (empty once all `n` are in).
  std::span<std::byte> room();

  /// `k` bytes went into `room()`.
  void filled(size_t k) { done_ += k; }

  /// Returns whether all `n` bytes are in.
  bool full() const { return done_ == n_; }

  /// Returns the filled bytes. REQUIRES: `full()`.
  std::vector<std::byte> take() { return std::move(buf_); }

private:
  std::vector<std::byte> buf_;
  size_t n_ = 0;
  size_t done_ = 0;
};

} // namespace ferry::detail
