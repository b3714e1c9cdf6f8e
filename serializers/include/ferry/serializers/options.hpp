// Options of one encode or decode call: context, limits, family lists.
//
// `context` tells a family who talks to whom (Dask's `context=`): a family may
// choose a different representation for a peer on the same host. `limits`
// bound what a decoder may allocate or accept, so that hostile bytes can cost
// no more than a small multiple of their own size. The option structs are
// plain values; build one per link and reuse it.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ferry::serializers {

class writer_shapes;

/// Who sends to whom, passed to every family (Dask's `context=`).
struct context {
  /// Name of the sending node.
  std::string sender;
  /// Name of the receiving node.
  std::string recipient;
  /// Name of the link the payload travels on.
  std::string link;
  /// Whether both nodes run on the same host (shared memory available).
  bool same_host = false;
};

/// Bounds every decoder honours; defaults suit messages up to 1 GiB.
struct limits {
  /// Largest payload (sum of frame sizes) accepted or produced. Default 1 GiB:
  /// a payload decoded in memory is held whole beside its value, so larger
  /// values belong in the store.
  uint64_t max_payload_bytes = uint64_t{1} << 30;
  /// A decoder may allocate up to `allocation_factor` times the bytes it
  /// received, plus `allocation_slack`, before it reads the elements that
  /// would justify the allocation. Legitimate values whose decoded form is
  /// more than 32 times their encoded size (e.g. long vectors of empty
  /// optionals of large types) need a larger factor.
  uint64_t allocation_factor = 32;
  /// Fixed allowance added to the allocation budget of every frame.
  uint64_t allocation_slack = 64 * 1024;
  /// Deepest nesting of containers or objects a decoder accepts.
  uint32_t max_depth = 128;
  /// Most frames a payload may have.
  uint32_t max_frames = 4096;
  /// Longest family or type name in a payload header.
  uint32_t max_name_bytes = 1024;

  /// Returns the allocation budget for an input of `bytes` bytes.
  [[nodiscard]] uint64_t budget(uint64_t bytes) const noexcept {
    auto factor = allocation_factor == 0 ? 1 : allocation_factor;
    if (bytes > (UINT64_MAX - allocation_slack) / factor)
      return UINT64_MAX;
    return bytes * factor + allocation_slack;
  }
};

/// Options of `registry::encode`.
struct encode_options {
  /// Preference list: the first family that can encode the value is used.
  std::vector<std::string> serializers{"cereal.binary"};
  /// Who sends to whom.
  serializers::context context;
  /// Bounds; `max_payload_bytes` also applies to encoding.
  serializers::limits limits;
  /// Keeps the value's memory alive for view frames (`raw`); when null, view
  /// frames are valid only while the encoded value lives unchanged.
  std::shared_ptr<const void> keep_alive;
  /// Traces this call member by member (in addition to the registry setting).
  bool trace = false;
};

/// Options of `registry::decode`.
struct decode_options {
  /// Allowlist: payloads of any other family are refused.
  std::vector<std::string> deserializers{"cereal.binary"};
  /// Who sends to whom.
  serializers::context context;
  /// Bounds every decoder honours.
  serializers::limits limits;
  /// The shapes the sending build writes its types with, where they differ
  /// from this build's and cereal.binary/cereal.portable bridge them
  /// (writer_shapes.hpp); null when they all match.
  std::shared_ptr<const serializers::writer_shapes> writer_shapes;
  /// Traces this call member by member (in addition to the registry setting).
  bool trace = false;
};

} // namespace ferry::serializers
