// ferry's control frames: the handshake, a link's control messages, and
// requests with their answers.
//
// Small control traffic between nodes uses this one fixed format, never a
// user-selectable family (DESIGN.md): each type writes and reads its fields
// with wire/codec.hpp, little-endian, and names its `frame_type`. Nothing
// here carries a node's or link's identity: a frame belongs to the link of
// the connection (or lane) it came on (docs/wire-format.md, "Handshake").
// Requests name a request id the asking node chose; the answer on the same
// link names it again.
//
// Reading treats bytes as hostile (wire/codec.hpp): `read` fails with
// `errc::decode_failed` naming the frame when a field does not fit or bytes
// are left over.
//
// Thread-safety: value types.
#pragma once

#include "wire/bytes.hpp"
#include "wire/codec.hpp"
#include "wire/frame.hpp"
#include "wire/message.hpp"
#include "wire/protocol.hpp"

#include <caf/error.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ferry::detail {

// -- handshake ----------------------------------------------------------------

/// Who a node is. Sent first on a connection, by both sides. Its first
/// three fields (protocol, node id, name) keep their layout in every
/// version, so a node of another version is refused naming both versions
/// and the peer.
struct intro {
  static constexpr auto type = wire::frame_type::intro;
  uint32_t protocol = wire_protocol_version;
  /// 64 random bits a node draws when it starts (never 0): it tells two
  /// runs of one node name apart, and orders the two nodes of a link.
  uint64_t node_id = 0;
  std::string node_name;
  std::string host_id;
  std::string store_name;
  bool has_store = false;
  /// The store's token (names it in serialized handles); 0 without a store.
  uint64_t store_token = 0;

  void write(wire::writer& out) const;
  /// Reads the protocol, node id and name, and the rest only when the
  /// protocol is this node's.
  [[nodiscard]] caf::error read(wire::reader& in);
};

/// The link a node offers the peer its intro named: sent by both sides
/// after the peer's intro was accepted.
struct hello {
  static constexpr auto type = wire::frame_type::hello;
  /// My preference list for this link.
  std::vector<std::string> serializers;
  /// My allowlist for this link.
  std::vector<std::string> deserializers;
  /// Families my registry can decode at all.
  std::vector<std::string> decodable;
  /// Id of my published default actor (0: none).
  uint64_t default_actor = 0;
  /// My credit window for this link (the receiver batches credit by it).
  uint64_t window_bytes = 0;
  uint64_t window_messages = 0;
  /// The names of my registered types, sorted, and their shapes
  /// (ferry/serializers/shape.hpp), at the same positions.
  std::vector<std::string> type_names;
  std::vector<std::string> type_shapes;
  /// The shared-memory ring I made to receive this link's frames through a
  /// same-host lane (lane/ring.hpp); empty: none.
  std::string lane;
  /// The compressions I read in inline frames ("lz4", "zstd"); a peer
  /// compresses frames to me only with one of these.
  std::vector<std::string> compressions;

  void write(wire::writer& out) const;
  [[nodiscard]] caf::error read(wire::reader& in);
};

/// The link is made: sent by the node with the lower node id (wire/frame.hpp).
struct welcome {
  static constexpr auto type = wire::frame_type::welcome;
  void write(wire::writer&) const {}
  [[nodiscard]] caf::error read(wire::reader& in) { return in.finish(); }
};

/// The connection is refused: the reason, then the connection closes.
struct refuse {
  static constexpr auto type = wire::frame_type::refuse;
  caf::error reason;
  void write(wire::writer& out) const;
  [[nodiscard]] caf::error read(wire::reader& in);
};

// -- a link's control messages ------------------------------------------------

/// Credit returned by a receiver: messages and bytes its actors processed.
/// `delivered` counts every message the receiver has taken off this link so
/// far (delivered or refused): their store tickets are redeemed or
/// cancelled, so the sender forgets them.
struct credit {
  static constexpr auto type = wire::frame_type::credit;
  uint64_t messages = 0;
  uint64_t bytes = 0;
  uint64_t delivered = 0;
  void write(wire::writer& out) const;
  [[nodiscard]] caf::error read(wire::reader& in);
};

/// A sender is waiting for credit: return what is processed now, and the
/// rest as soon as it is processed (receivers otherwise return credit in
/// batches of a quarter window).
struct credit_probe {
  static constexpr auto type = wire::frame_type::probe;
  void write(wire::writer&) const {}
  [[nodiscard]] caf::error read(wire::reader& in) { return in.finish(); }
};

/// An actor the peer knew about has terminated.
struct down_notice {
  static constexpr auto type = wire::frame_type::down;
  uint64_t actor = 0;
  caf::error reason;
  void write(wire::writer& out) const;
  [[nodiscard]] caf::error read(wire::reader& in);
};

/// Terminate one of the receiver's actors (an exit message sent to a proxy).
struct exit_request {
  static constexpr auto type = wire::frame_type::exit;
  /// The receiver's actor.
  uint64_t actor = 0;
  /// The sender's actor that sent the exit (0: none).
  uint64_t source = 0;
  caf::error reason;
  void write(wire::writer& out) const;
  [[nodiscard]] caf::error read(wire::reader& in);
};

/// Link (or unlink) one of the receiver's actors with one of the sender's
/// (`link_to` / `unlink_from` between an actor and a proxy).
struct link_request {
  static constexpr auto type = wire::frame_type::link;
  /// The receiver's actor (an actor it exported on this link).
  uint64_t actor = 0;
  /// The sender's actor (exported by the sender on this link).
  uint64_t partner = 0;
  /// true: link; false: unlink.
  bool establish = true;
  void write(wire::writer& out) const;
  [[nodiscard]] caf::error read(wire::reader& in);
};

/// A one-way message was refused by the receiver (the sender logs and counts).
struct refusal {
  static constexpr auto type = wire::frame_type::refusal;
  uint64_t target = 0;
  caf::error reason;
  void write(wire::writer& out) const;
  [[nodiscard]] caf::error read(wire::reader& in);
};

/// The receiver has all bytes of a transfer (or gave up): release it.
struct transfer_done {
  static constexpr auto type = wire::frame_type::transfer_done;
  uint64_t transfer = 0;
  void write(wire::writer& out) const;
  [[nodiscard]] caf::error read(wire::reader& in);
};

// -- requests and answers -----------------------------------------------------

/// Ask the peer for the id of an actor it exposes under a name (empty: its
/// published default actor). Answered by `actor_id_answer` or `failed_answer`.
struct lookup {
  static constexpr auto type = wire::frame_type::lookup;
  uint64_t request = 0;
  std::string name;
  void write(wire::writer& out) const;
  [[nodiscard]] caf::error read(wire::reader& in);
};

/// Spawn an actor type registered on the receiving node. Answered by
/// `actor_id_answer` or `failed_answer`.
struct spawn_request {
  static constexpr auto type = wire::frame_type::spawn;
  uint64_t request = 0;
  std::string type_name;
  /// The constructor's arguments, as a message's elements.
  wire_message args;
  /// Appends the fields and the arguments' body to `out` (not through a
  /// plain writer: the arguments' large pieces are viewed, not copied).
  void write_to(wire::out_frame& out) const;
  [[nodiscard]] caf::error read(wire::reader& in);
};

/// Request for bytes of a frame the receiver holds for a cross-host
/// transfer. Answered by `chunk` or `failed_answer`.
struct chunk_request {
  static constexpr auto type = wire::frame_type::chunk_request;
  uint64_t request = 0;
  uint64_t transfer = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  void write(wire::writer& out) const;
  [[nodiscard]] caf::error read(wire::reader& in);
};

/// Request for bytes of a store object that the asked node pulls (or
/// pulled) from another node, its owner: a receiver told by the owner to
/// pull from the asked node (wire/relay_hint.hpp) asks it first and falls
/// back to the owner. Answered like a `chunk_request`.
struct relay_request {
  static constexpr auto type = wire::frame_type::relay_request;
  uint64_t request = 0;
  /// The object's relay key, from the owner's hint.
  uint64_t key = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  void write(wire::writer& out) const;
  [[nodiscard]] caf::error read(wire::reader& in);
};

/// The answer to a `lookup` or `spawn_request`: the actor's id.
struct actor_id_answer {
  static constexpr auto type = wire::frame_type::actor_id;
  uint64_t request = 0;
  uint64_t actor = 0;
  void write(wire::writer& out) const;
  [[nodiscard]] caf::error read(wire::reader& in);
};

/// The answer to a request that failed.
struct failed_answer {
  static constexpr auto type = wire::frame_type::failed;
  uint64_t request = 0;
  caf::error reason;
  void write(wire::writer& out) const;
  [[nodiscard]] caf::error read(wire::reader& in);
};

/// A chunk's bytes on their way back to the node that asked for them.
struct chunk_reply {
  uint64_t request = 0;
  wire_bytes data;
};

/// The answer to a chunk or relay request: `le64 request`, then the bytes
/// to the end of the frame. Returns the finished frame; the bytes are
/// viewed, kept alive by `keep_alive`.
wire::out_frame chunk_frame(uint64_t request, std::span<const std::byte> bytes,
                            const std::shared_ptr<const void>& keep_alive);

/// Returns the finished frame of a `spawn_request`.
wire::out_frame spawn_frame(const spawn_request& x);

} // namespace ferry::detail
