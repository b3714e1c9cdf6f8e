// wire_bytes: a run of bytes inside a wire message.
//
// On the sending side a `wire_bytes` is a view of memory owned elsewhere (a
// payload frame, kept alive by `keep_alive`), written with one `apply_raw`
// and never copied before CAF's serializer. On the receiving side it owns a
// buffer, read after its claimed length was checked against the bytes the
// deserializer actually holds, so a hostile length never allocates.
//
// Also here: `inspect_by_hand`, the CAF 0.17 `inspect` of wire types that
// write and read themselves, and `next_bytes`, the view of a binary
// deserializer's unread bytes that readers copy from.
//
// Thread-safety: a value type; distinct objects may be used by distinct
// threads. Copies share the bytes (immutable once made).
#pragma once

#include <caf/binary_deserializer.hpp>
#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/sec.hpp>
#include <caf/serializer.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

namespace ferry::detail {

/// CAF 0.17 `inspect` for a wire type that writes and reads itself
/// (`save`/`load`); any other inspector (CAF's to_string) gets `summary()`.
template <class Inspector, class T, class Summary>
typename Inspector::result_type inspect_by_hand(Inspector& f, T& x,
                                                Summary summary) {
  if constexpr (std::is_base_of_v<caf::serializer, Inspector>) {
    return x.save(f);
  } else if constexpr (std::is_base_of_v<caf::deserializer, Inspector>) {
    return x.load(f);
  } else {
    return summary();
  }
}

/// The next `n` bytes of `source`, where CAF holds them.
/// REQUIRES: `n <= source.remaining()`.
inline std::span<const std::byte> next_bytes(caf::binary_deserializer& source,
                                             uint64_t n) {
  return {reinterpret_cast<const std::byte*>(source.remainder().data()),
          static_cast<size_t>(n)};
}

/// Bytes on the wire: a view when sending, an owned buffer when received.
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

  /// Takes the next `n` bytes of `source` into an owned buffer, copied
  /// straight from its buffer (not zero-filled first).
  /// REQUIRES: `n <= source.remaining()`.
  static wire_bytes take_from(caf::binary_deserializer& source, size_t n);

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

  /// Saves: length, then the bytes in one block.
  caf::error save(caf::serializer& sink) const;

  /// Loads: length, checked against the bytes left, then the bytes (copied
  /// straight from a binary deserializer's buffer, without zeroing first).
  caf::error load(caf::deserializer& source);

  /// Loads the `n` bytes after the length (see `load`).
  caf::error load_body(caf::deserializer& source, uint64_t n);

private:
  std::span<const std::byte> view_;
  std::shared_ptr<const void> keep_alive_;
  std::shared_ptr<std::vector<std::byte>> owned_;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, wire_bytes& x) {
  return inspect_by_hand(f, x, [&] {
    auto n = static_cast<uint64_t>(x.size());
    return f(caf::meta::type_name("ferry.bytes"), n);
  });
}

} // namespace ferry::detail
