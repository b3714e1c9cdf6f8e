// The hostile-input tests' fixture: value types whose encodings make good
// attacks (recursion, shared pointers of two types, separate frames, enums
// with and without a fixed underlying type, bit vectors), little-endian
// writers for hand-made frames, and `hostile::decode_bytes`, which decodes
// raw bytes as a one-frame payload of a family under given limits. The tests
// themselves are in hostile_claims_test.cpp (size claims and budgets) and
// hostile_frames_test.cpp (truncated, malformed and random frames).
#pragma once

#include "test_types.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace ferry::serializers::test::hostile_inputs {

/// A recursive type with its own serialization in every family.
struct tree {
  std::vector<tree> kids;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(kids);
  }

  MSGPACK_DEFINE(kids)

  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f, tree& x) {
    return f(x.kids);
  }
};

/// Shared pointers of two types.
struct two_kinds {
  std::shared_ptr<node> a;
  std::shared_ptr<point> b;
};

/// A collection of members with frames of their own.
struct byte_columns {
  std::vector<separate<std::vector<uint8_t>>> columns;
};

/// An enum without a fixed underlying type: only 0 and 1 are its values.
enum legacy_switch { legacy_off, legacy_on };

struct with_legacy_switch {
  legacy_switch state = legacy_off;
};

/// An enum with a fixed underlying type: every uint8_t is one of its values.
enum class level : uint8_t { low, high };

struct with_level {
  level value = level::low;
};

/// 4 KiB per element, for inputs that claim many elements cheaply.
using big_element = std::array<double, 512>;

/// An aggregate holding a bit vector.
struct flag_row {
  int32_t id = 0;
  std::vector<bool> bits;
  friend bool operator==(const flag_row&, const flag_row&) = default;
};

inline void append_u64(std::vector<std::byte>& out, uint64_t x) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<std::byte>((x >> (8 * i)) & 0xff));
}

inline void append_u32(std::vector<std::byte>& out, uint32_t x) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<std::byte>((x >> (8 * i)) & 0xff));
}

/// Returns whether `err` is one of the typed errors a decoder gives for
/// bytes it refuses.
inline bool is_typed_decode_error(const caf::error& err) {
  if (err.category() != caf::atom("ferry_ser"))
    return false;
  auto code = static_cast<errc>(err.code());
  return code == errc::truncated_frame || code == errc::malformed_frame
         || code == errc::length_out_of_range
         || code == errc::allocation_limit_exceeded
         || code == errc::decode_failed || code == errc::trailing_bytes
         || code == errc::nesting_too_deep || code == errc::frame_mismatch
         || code == errc::inexact_value || code == errc::invalid_text
         || code == errc::duplicate_key || code == errc::member_mismatch
         || code == errc::unused_frame;
}

class hostile : public ::testing::Test {
protected:
  registry sut;

  template <class T>
  caf::expected<T> decode_bytes(const std::string& family,
                                std::vector<std::byte> bytes,
                                const limits& lim = {}) {
    auto p = make_payload(family, name_in<T>(sut), std::move(bytes));
    auto opts = decode_with(family);
    opts.limits = lim;
    return sut.decode<T>(p, opts);
  }
};

} // namespace ferry::serializers::test::hostile_inputs
