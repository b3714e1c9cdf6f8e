// frame: the unit of ferry's wire, on a connection and on a same-host lane.
//
// A connection starts with the 8-byte preface `FERRY/1\n` from each side
// (after the TLS handshake on a TLS connection), then carries frames until
// it closes. A same-host lane carries frames too, one per ring record,
// without the preface. A frame is a 12-byte header, then `length` bytes of
// body:
//
//   le64 length   bytes of body that follow
//   le16 type     a `frame_type`
//   le16 flags    0 (a reader refuses anything else)
//
// The bodies are in wire/control.hpp (handshake, control and request
// frames) and wire/message.hpp (user messages and batches);
// docs/wire-format.md has every byte. A reader checks `length` against the
// largest body it takes of that type (`max_body`) before it reads any of
// it: a frame over its bound ends the connection.
//
// Thread-safety: constants and pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace ferry::detail::wire {

/// What each side sends first on a connection.
inline constexpr std::array<std::byte, 8> preface{
  std::byte{'F'}, std::byte{'E'}, std::byte{'R'}, std::byte{'R'},
  std::byte{'Y'}, std::byte{'/'}, std::byte{'1'}, std::byte{'\n'}};

/// Bytes of a frame header.
inline constexpr size_t header_size = 12;

/// Bytes of a `chunk` frame's body before its data (the request id).
inline constexpr size_t chunk_prefix = 8;

enum class frame_type : uint16_t {
  // -- handshake (before the link exists) --
  /// Who a node is: protocol version, node id, name, host and store.
  intro = 1,
  /// The link a node offers: families, window, types, lane.
  hello = 2,
  /// The link is made (sent by the node with the lower node id).
  welcome = 3,
  /// The connection is refused, with the reason.
  refuse = 4,
  // -- either time --
  /// Nothing but proof of life.
  heartbeat = 5,
  /// The sending node stops: the link goes down, nothing is lost.
  goodbye = 6,
  // -- a link's stream --
  message = 16,
  batch = 17,
  credit = 18,
  probe = 19,
  down = 20,
  exit = 21,
  link = 22,
  refusal = 23,
  transfer_done = 24,
  // -- requests and their answers (matched by request id on the link) --
  lookup = 32,
  spawn = 33,
  chunk_request = 34,
  relay_request = 35,
  actor_id = 40,
  chunk = 41,
  failed = 42,
};

/// Returns the frame type's name ("message"), or "unknown".
const char* name_of(frame_type x);

/// Returns whether `x` names a frame type this version knows.
bool is_known(uint16_t x);

struct frame_header {
  uint64_t length = 0;
  frame_type type = frame_type::heartbeat;
  uint16_t flags = 0;
};

/// Writes `x` into `out`.
void put_header(std::span<std::byte, header_size> out, const frame_header& x);

/// Reads a header; nothing (and `why` says what) when its type is unknown or
/// its flags are set.
std::optional<frame_header>
get_header(std::span<const std::byte, header_size> in, std::string& why);

} // namespace ferry::detail::wire
