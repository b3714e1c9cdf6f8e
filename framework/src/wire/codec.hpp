// codec: ferry's fixed little-endian encoding of the wire's fields.
//
// Every frame ferry writes on a connection or a same-host lane is made of
// these fields (docs/wire-format.md, "Encodings"): `u8`, `le16`, `le32`,
// `le64` integers, `str` (a `le32` byte length, then the bytes, no
// terminator), `strs` (a `le32` count, then that many `str`) and `error`
// (a `u8` code, a `le64` category, a `str` text). A peer needs no CAF to
// read or write them.
//
// `writer` appends fields to a byte vector. `reader` takes fields from a
// span of received bytes and treats them as hostile: every length and count
// is checked against the bytes left before anything is allocated, and the
// first field that does not fit makes the reader fail for good, so a parser
// checks `ok()` (or `finish()`) once at the end instead of after every
// field. A failed reader yields zeros and empty values.
//
// Thread-safety: value types; distinct objects may be used by distinct
// threads.
#pragma once

#include <caf/error.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::detail::wire {

/// Longest `str` a reader takes (names, families, type shapes; a hello's
/// shapes are many `str`s, each bounded by this).
inline constexpr uint32_t max_str = 1u << 20;

/// Most entries of a `strs` a reader takes.
inline constexpr uint32_t max_strs = 1u << 16;

class writer {
public:
  /// Appends to `out`.
  explicit writer(std::vector<std::byte>& out) : out_(out) {
    // nop
  }

  void u8(uint8_t x) { put(x, 1); }
  void le16(uint16_t x) { put(x, 2); }
  void le32(uint32_t x) { put(x, 4); }
  void le64(uint64_t x) { put(x, 8); }

  void str(std::string_view x);
  void strs(const std::vector<std::string>& x);
  void bytes(std::span<const std::byte> x);
  void error(const caf::error& x);

  /// Returns the bytes written so far (of the whole vector).
  size_t size() const { return out_.size(); }

private:
  void put(uint64_t x, size_t n);

  std::vector<std::byte>& out_;
};

class reader {
public:
  /// Reads `in`; `what` names the frame in error texts ("hello").
  reader(std::span<const std::byte> in, const char* what)
    : in_(in),
      what_(what) {
    // nop
  }

  uint8_t u8() { return static_cast<uint8_t>(get(1)); }
  uint16_t le16() { return static_cast<uint16_t>(get(2)); }
  uint32_t le32() { return static_cast<uint32_t>(get(4)); }
  uint64_t le64() { return get(8); }
  bool boolean();

  std::string str();
  std::vector<std::string> strs();
  caf::error error();

  /// Takes the next `n` bytes as a view of the input.
  std::span<const std::byte> bytes(uint64_t n);

  /// Takes everything left.
  std::span<const std::byte> rest();

  /// Returns the bytes not read yet.
  size_t remaining() const { return in_.size() - pos_; }

  /// Returns whether every field so far fit.
  bool ok() const { return failure_.empty(); }

  /// Makes the reader fail with `why` (the first failure stays).
  void fail(std::string why);

  /// Returns none when every field fit and no byte is left, else
  /// `errc::decode_failed` naming the frame and what was wrong.
  [[nodiscard]] caf::error finish() const;

  /// Returns the failure as an error (none while `ok()`).
  [[nodiscard]] caf::error failure() const;

private:
  uint64_t get(size_t n);

  std::span<const std::byte> in_;
  size_t pos_ = 0;
  const char* what_;
  std::string failure_;
};

} // namespace ferry::detail::wire
