// Types and the harness shared by the libFuzzer targets: each target feeds
// its input, as one frame, to one built-in family's decoder through a
// registry. What decodes must come back exactly (`check_exact`): the family
// encodes it again (a decoder accepts only what its encoder can write:
// UTF-8 text where the family carries text, numbers it carries bit for bit),
// that encoding decodes, and encoding the result gives the same bytes. A
// failure aborts, which libFuzzer reports with the input.
#pragma once

#include "ferry/serializers/all.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace ferry::serializers::fuzz {

/// Fields every structured family can carry.
struct common {
  int64_t id = 0;
  double score = 0;
  std::string name;
  std::vector<float> values;
  std::map<std::string, int32_t> tags;
  std::vector<std::vector<int16_t>> nested;
  std::vector<bool> flags;
};

struct leaf {
  int32_t value = 0;
  std::vector<uint8_t> bytes;
};

/// What cereal can say on top: optional, variant, shared identity.
struct cereal_value {
  common base;
  std::optional<std::string> maybe;
  std::variant<int32_t, std::string, std::vector<double>> choice;
  std::vector<std::shared_ptr<leaf>> shared;
  std::unique_ptr<leaf> owned;
};

/// What msgpack can say on top: optional.
struct msgpack_value {
  int64_t id = 0;
  double score = 0;
  std::string name;
  std::vector<float> values;
  std::map<std::string, int32_t> tags;
  std::vector<std::vector<int16_t>> nested;
  std::vector<bool> flags;
  std::optional<std::string> maybe;
};

/// A recursive type, for depth limits.
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

/// Plain data for raw.
struct sample {
  int64_t id = 0;
  double value = 0;
  std::array<float, 4> extra{};
};

/// The registry of the types above, every built-in family (built once, in
/// fuzz_registry.cpp: each target then compiles only its own calls).
registry& fuzz_registry();

/// Stops the fuzzer: `x`, decoded from its input in `family`, did not come
/// back exactly.
[[noreturn]] inline void not_exact(const char* family, const char* what,
                                   const caf::error& err = caf::error{}) {
  std::fprintf(stderr, "%s: a decoded value %s%s%s\n", family, what,
               err ? ": " : "", err ? render(err).c_str() : "");
  std::abort();
}

/// Returns the bytes of `frames`, concatenated.
inline std::vector<std::byte> joined(const std::vector<frame>& frames) {
  std::vector<std::byte> result;
  for (auto& f : frames)
    result.insert(result.end(), f.bytes().begin(), f.bytes().end());
  return result;
}

/// Checks that `x`, which decoded in `family`, comes back exactly:
/// encode(x) succeeds, decodes to y, and encode(y) writes the same frames.
/// `keep` keeps `x` alive for split (two-frame) encodings; may be null.
/// Returns encode(x)'s frames, concatenated.
template <class T>
std::vector<std::byte> check_exact(const char* family, const T& x,
                                   const std::shared_ptr<const void>& keep) {
  auto& reg = fuzz_registry();
  encode_options eo;
  eo.serializers = {family};
  eo.keep_alive = keep;
  auto first = reg.encode(x, eo);
  if (!first)
    not_exact(family, "cannot be encoded again", first.error());
  // The encoding is ferry's own: decode it with room to spare, the limits
  // are not what this checks.
  decode_options opts;
  opts.deserializers = {family};
  opts.limits.allocation_factor = 1024;
  auto y = reg.decode<T>(*first, opts);
  if (!y)
    not_exact(family, "encodes to bytes that do not decode", y.error());
  auto second = reg.encode(*y, eo);
  if (!second)
    not_exact(family, "decodes from its encoding to a value that cannot be "
                      "encoded",
              second.error());
  auto result = joined(first->frames);
  if (result != joined(second->frames))
    not_exact(family, "changed on its way through encode and decode");
  return result;
}

/// Stops the fuzzer: a refusal that is not one of the serializers' typed
/// errors with a text that says what failed.
inline void require_typed(const char* family, const caf::error& err) {
  if (err.category() == caf::atom("ferry_ser") && err.code() != 0
      && !render(err).empty())
    return;
  std::fprintf(stderr, "%s: a refusal that is not a typed error: %s\n",
               family, render(err).c_str());
  std::abort();
}

/// Decodes `data` as a `T` in `family`; checks that what decodes comes back
/// exactly, and with `typed` that what is refused is refused with a typed
/// error (`require_typed`). Returns the family's encoding of what decoded,
/// or nothing when `data` was refused.
template <class T>
std::optional<std::vector<std::byte>>
decode_one(const char* family, const char* type_name,
           std::span<const std::byte> data, bool typed = false) {
  auto& reg = fuzz_registry();
  payload p;
  p.header.family = family;
  p.header.type_name = type_name;
  p.header.frame_sizes = {data.size()};
  p.frames.push_back(frame::view(data));
  decode_options opts;
  opts.deserializers = {family};
  opts.limits.max_depth = 64;
  opts.limits.allocation_factor = 16;
  auto x = reg.decode<T>(p, opts);
  if (x)
    return check_exact(family, *x, nullptr);
  if (typed)
    require_typed(family, x.error());
  return std::nullopt;
}

/// Decodes `data` as a two-frame payload of a `T` (the split form of large
/// top-level arrays, see families/cereal.hpp): the first byte chooses where
/// frame 0 ends. Checks that what decodes comes back exactly, encoding with
/// a keep-alive so that large values split again.
template <class T>
void decode_split(const char* family, const char* type_name,
                  std::span<const std::byte> data) {
  if (data.empty())
    return;
  auto cut = std::min<size_t>(std::to_integer<size_t>(data[0]),
                              data.size() - 1);
  auto rest = data.subspan(1);
  auto& reg = fuzz_registry();
  payload p;
  p.header.family = family;
  p.header.type_name = type_name;
  p.header.frame_sizes = {cut, rest.size() - cut};
  p.frames.push_back(frame::view(rest.first(cut)));
  p.frames.push_back(frame::view(rest.subspan(cut)));
  decode_options opts;
  opts.deserializers = {family};
  auto x = reg.decode<T>(std::move(p), opts);
  if (x) {
    auto keep = std::make_shared<T>(std::move(*x));
    check_exact(family, *keep, keep);
  }
}

inline std::span<const std::byte> as_bytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

} // namespace ferry::serializers::fuzz
