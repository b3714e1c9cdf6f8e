// ferry's wire protocol: its version, how payload frames travel, and its
// size rules.
//
// Everything one node sends another travels in ferry's own frames
// (wire/frame.hpp) on a TCP connection of ferry's own or a same-host lane:
// user messages (wire/message.hpp) and control frames (wire/control.hpp).
// User values never reach CAF's serializer outside the `caf` family: a
// family encodes them into payload frames, which travel as `wire_bytes`.
// docs/wire-format.md describes every frame byte by byte.
//
// This header holds the constants both ends must agree on. It has no state.
#pragma once

#include <cstdint>

namespace ferry::detail {

/// Protocol version of ferry's wire types and of the payload forms the
/// built-in families put in them. A peer with another version is refused at
/// the handshake, naming both versions (an `intro` is read only as far as
/// its version, node id and name). Raise it with every change of a frame's
/// layout or of a family's payload form.
inline constexpr uint32_t wire_protocol_version = 15;

/// How a frame travels.
enum class frame_kind : uint8_t {
  /// The bytes are in `data`.
  inline_plain = 0,
  /// `data` holds the bytes compressed with LZ4.
  inline_lz4 = 1,
  /// `data` holds the bytes compressed with Zstandard.
  inline_zstd = 2,
  /// The bytes are a sealed object in the shared store; `ticket` is the
  /// in-band transfer ticket the receiver redeems.
  store_object = 3,
  /// The bytes stay with the sender; the receiver pulls them in chunks
  /// (transfer id in `ticket`) and acknowledges.
  remote_object = 4,
  /// Not a payload frame: an `object_ref` of the sender's store that the
  /// element's payload holds, sent to a node that cannot attach that store.
  /// `object_id` names the object there, `size` its size, `ticket` the
  /// transfer the receiver pulls it by (like `remote_object`) into an object
  /// of its own store; the payload's handles then resolve to that copy.
  remote_handle = 5,
  /// Like `remote_handle` for an object below the link's pull threshold:
  /// its bytes travel in `data` and the receiver puts them into its store.
  inline_handle = 6,
};

/// Returns whether the receiver pulls frames of `kind` from the sender.
constexpr bool is_pulled(frame_kind kind) {
  return kind == frame_kind::remote_object || kind == frame_kind::remote_handle;
}

/// Fixed per-message overhead counted against the credit window, on top of
/// each element's header and each frame's bytes (see `wire_size`).
inline constexpr uint64_t wire_overhead = 64;

/// Per-frame overhead counted against the credit window.
inline constexpr uint64_t wire_frame_overhead = 32;

/// A batch holds at most this many messages. A sender flushes its batch at
/// 256 KiB and counts every message as at least `wire_overhead` bytes, so
/// its batches hold 4097 at most; a receiver refuses more before allocating
/// (a wire_message takes about 230 bytes in memory whatever its wire size).
inline constexpr uint32_t max_batch_messages = 8192;

} // namespace ferry::detail
