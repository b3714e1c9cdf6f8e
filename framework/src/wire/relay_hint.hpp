// relay_hint: where a receiver may pull a store object besides its owner.
//
// A store object sent to nodes on other hosts travels as a `remote_handle`
// frame: the receiver pulls it from the owner in chunks. When the owner
// sends one object to several nodes, it tells each receiver in the frame's
// data which node it gave the object to before (transfer/relay_directory.hpp);
// the receiver then pulls the chunks from that node as they land there
// (transfer/relay_sources.hpp), and the owner sends the object about once, not
// once per receiver, as Ray's object manager does.
//
// The data: the object's relay key (`le64`, 64 random bits the owner drew
// for this object, never 0), then the name of the node to pull from (0 to
// `max_relay_name` bytes; none: pull from the owner). The key names the
// object on every node that pulls it; only nodes the owner sent the object
// to learn it. A frame without data carries no hint (a node that does not
// relay).
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ferry::detail {

/// Longest node name a relay hint carries.
inline constexpr size_t max_relay_name = 255;

struct relay_hint {
  /// Names the object on the nodes pulling it (never 0).
  uint64_t key = 0;
  /// The node to pull from besides the owner (empty: none).
  std::string from;
};

/// Returns the hint as a `remote_handle` frame's data.
std::vector<std::byte> encode_relay_hint(const relay_hint& x);

/// Reads a hint from a `remote_handle` frame's data; nothing when the data
/// is empty or not a hint (a key of 0, fewer than 8 bytes, a name too long).
std::optional<relay_hint> decode_relay_hint(std::span<const std::byte> data);

} // namespace ferry::detail
