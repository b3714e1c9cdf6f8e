// Value types shared by the serializers tests.
#pragma once

#include "ferry/serializers/all.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace ferry::serializers::test {

/// A plain aggregate: no user code at all.
struct point {
  int32_t x = 0;
  double y = 0;
  std::string label;
  friend bool operator==(const point&, const point&) = default;
};

/// Nested aggregates with containers.
struct shape {
  std::string name;
  std::vector<point> corners;
  std::map<std::string, int32_t> tags;
  friend bool operator==(const shape&, const shape&) = default;
};

/// A plain-old-data aggregate every family, raw included, can carry.
struct sample {
  int64_t id = 0;
  double value = 0;
  std::array<float, 4> extra{};
  friend bool operator==(const sample&, const sample&) = default;
};

/// The benchmark's record.
struct record {
  int64_t id = 0;
  std::string name;
  std::vector<float> values;
  std::map<std::string, int32_t> tags;
  friend bool operator==(const record&, const record&) = default;
};

/// A node of a shared graph.
struct node {
  int32_t value = 0;
  std::vector<int32_t> payload;
  friend bool operator==(const node&, const node&) = default;
};

/// Holds the same object several times.
struct graph {
  std::vector<std::shared_ptr<node>> nodes;
};

/// A class with private state, no serialization, cannot be changed.
class legacy_id {
public:
  legacy_id() = default;
  legacy_id(std::string ns, uint32_t n) : ns_(std::move(ns)), n_(n) {
  }
  const std::string& ns() const {
    return ns_;
  }
  uint32_t n() const {
    return n_;
  }
  friend bool operator==(const legacy_id&, const legacy_id&) = default;

private:
  std::string ns_;
  uint32_t n_ = 0;
};

/// A type with its own serialization for every family.
class account {
public:
  account() = default;
  account(std::string owner, int64_t cents)
    : owner_(std::move(owner)), cents_(cents) {
  }
  const std::string& owner() const {
    return owner_;
  }
  int64_t cents() const {
    return cents_;
  }
  friend bool operator==(const account&, const account&) = default;

  // cereal, as a member (a free template would collide with CAF 0.17).
  template <class Archive>
  void serialize(Archive& ar) {
    ar(owner_, cents_);
  }

  // msgpack
  MSGPACK_DEFINE(owner_, cents_)

  // CAF
  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f, account& x) {
    return f(caf::meta::type_name("account"), x.owner_, x.cents_);
  }

private:
  std::string owner_;
  int64_t cents_ = 0;
};

/// Family tags for typed tests, with what each family can express.
struct cereal_binary_family {
  static constexpr const char* name = "cereal.binary";
  static constexpr bool structured = true;
  static constexpr bool optionals = true;
  static constexpr bool variants = true;
  static constexpr bool shared_identity = true;
  static constexpr bool nul_in_strings = true;
  static constexpr bool subnormals = true;
  /// Strings must be UTF-8 text (the family refuses other bytes).
  static constexpr bool text_only = false;
  /// Every NaN comes back bit for bit (else only the default one).
  static constexpr bool nan_payloads = true;
  /// Infinities and NaNs travel at all.
  static constexpr bool nonfinite = true;
  /// -0.0 keeps its sign.
  static constexpr bool negative_zero = true;
};

struct cereal_portable_family {
  static constexpr const char* name = "cereal.portable";
  static constexpr bool structured = true;
  static constexpr bool optionals = true;
  static constexpr bool variants = true;
  static constexpr bool shared_identity = true;
  static constexpr bool nul_in_strings = true;
  static constexpr bool subnormals = true;
  /// Strings must be UTF-8 text (the family refuses other bytes).
  static constexpr bool text_only = false;
  /// Every NaN comes back bit for bit (else only the default one).
  static constexpr bool nan_payloads = true;
  /// Infinities and NaNs travel at all.
  static constexpr bool nonfinite = true;
  /// -0.0 keeps its sign.
  static constexpr bool negative_zero = true;
};

struct cereal_json_family {
  static constexpr const char* name = "cereal.json";
  static constexpr bool structured = true;
  static constexpr bool optionals = true;
  static constexpr bool variants = true;
  static constexpr bool shared_identity = true;
  static constexpr bool nul_in_strings = false;
  static constexpr bool subnormals = true;
  /// Strings must be UTF-8 text (the family refuses other bytes).
  static constexpr bool text_only = true;
  /// Every NaN comes back bit for bit (else only the default one).
  static constexpr bool nan_payloads = false;
  /// Infinities and NaNs travel at all.
  static constexpr bool nonfinite = true;
  /// -0.0 keeps its sign.
  static constexpr bool negative_zero = true;
};

struct msgpack_family {
  static constexpr const char* name = "msgpack";
  static constexpr bool structured = true;
  static constexpr bool optionals = true;
  static constexpr bool variants = false;
  static constexpr bool shared_identity = false;
  static constexpr bool nul_in_strings = true;
  static constexpr bool subnormals = true;
  /// Strings must be UTF-8 text (the family refuses other bytes).
  static constexpr bool text_only = true;
  /// Every NaN comes back bit for bit (else only the default one).
  static constexpr bool nan_payloads = true;
  /// Infinities and NaNs travel at all.
  static constexpr bool nonfinite = true;
  /// -0.0 keeps its sign.
  static constexpr bool negative_zero = true;
};

struct caf_family {
  static constexpr const char* name = "caf";
  static constexpr bool structured = true;
  static constexpr bool optionals = false;
  static constexpr bool variants = false;
  static constexpr bool shared_identity = false;
  static constexpr bool nul_in_strings = true;
  static constexpr bool subnormals = false;
  /// Strings must be UTF-8 text (the family refuses other bytes).
  static constexpr bool text_only = false;
  /// Every NaN comes back bit for bit (else only the default one).
  static constexpr bool nan_payloads = false;
  /// Infinities and NaNs travel at all.
  static constexpr bool nonfinite = false;
  /// -0.0 keeps its sign.
  static constexpr bool negative_zero = false;
};

struct raw_family {
  static constexpr const char* name = "raw";
  static constexpr bool structured = false;
  static constexpr bool optionals = false;
  static constexpr bool variants = false;
  static constexpr bool shared_identity = false;
  static constexpr bool nul_in_strings = true;
  static constexpr bool subnormals = true;
  /// Strings must be UTF-8 text (the family refuses other bytes).
  static constexpr bool text_only = false;
  /// Every NaN comes back bit for bit (else only the default one).
  static constexpr bool nan_payloads = true;
  /// Infinities and NaNs travel at all.
  static constexpr bool nonfinite = true;
  /// -0.0 keeps its sign.
  static constexpr bool negative_zero = true;
};

using all_families
  = ::testing::Types<cereal_binary_family, cereal_portable_family,
                     cereal_json_family, msgpack_family, caf_family,
                     raw_family>;

/// Options naming only `family`.
inline encode_options encode_with(std::string family) {
  encode_options result;
  result.serializers = {std::move(family)};
  return result;
}

/// Options allowing only `family`.
inline decode_options decode_with(std::string family) {
  decode_options result;
  result.deserializers = {std::move(family)};
  return result;
}

/// Returns the registered name ferry uses for `T` in `sut`.
template <class T>
std::string name_in(const registry& sut) {
  auto p = sut.encode(T{}, encode_with("cereal.binary"));
  return p ? p->header.type_name : std::string{};
}

/// Returns `n` bytes that are not all alike.
inline std::vector<std::byte> byte_ramp(size_t n) {
  std::vector<std::byte> result(n);
  for (size_t i = 0; i < n; ++i)
    result[i] = static_cast<std::byte>(i * 7 + 3);
  return result;
}

/// Returns `p` as it arrives from the wire: header through its codec, frames
/// copied into owned buffers.
inline caf::expected<payload> over_the_wire(const payload& p,
                                            const limits& lim = {}) {
  auto header = decode_header(encode_header(p.header), lim);
  if (!header)
    return std::move(header.error());
  payload result;
  result.header = std::move(*header);
  for (auto& f : p.frames)
    result.frames.emplace_back(
      std::vector<std::byte>(f.bytes().begin(), f.bytes().end()));
  return result;
}

/// Returns `bytes` as a one-frame payload of `family` and `type_name`.
inline payload make_payload(std::string family, std::string type_name,
                            std::vector<std::byte> bytes) {
  payload result;
  result.header.family = std::move(family);
  result.header.type_name = std::move(type_name);
  result.header.frame_sizes = {bytes.size()};
  result.frames.emplace_back(std::move(bytes));
  return result;
}

/// Converts a byte string literal to bytes.
inline std::vector<std::byte> bytes_of(std::initializer_list<int> xs) {
  std::vector<std::byte> result;
  for (auto x : xs)
    result.push_back(static_cast<std::byte>(x));
  return result;
}

} // namespace ferry::serializers::test
