// Error codes of ferry::framework (nodes and links).
//
// Errors built from `errc` carry the category atom `ferry_fw` and a context
// string naming the link, the peer, the message type and family involved and
// how to fix it. They travel in actor replies like any `caf::error`: a request
// refused by a remote node fails with one of these. Errors from the
// serializers (`ferry_ser`) and the store (`ferry_sto`) pass through unchanged.
#pragma once

#include <caf/error.hpp>
#include <caf/make_message.hpp>

#include <cstdint>
#include <string>

namespace ferry {

/// Error codes of the framework (category `ferry_fw`).
enum class errc : uint8_t {
  /// Not an error.
  none = 0,
  /// Connecting to a remote node failed (no node at the address, or the
  /// socket's error).
  connect_failed,
  /// The handshake with a remote node failed or timed out.
  handshake_failed,
  /// The sender's `serializers` and the receiver's `deserializers` share no
  /// family.
  no_common_family,
  /// The receiver refused the message's family (not in its allowlist).
  family_refused,
  /// The message's type is not registered on this node.
  unregistered_type,
  /// The message exceeds the link's `max_message_size`.
  message_too_large,
  /// The link to the remote node is down.
  link_down,
  /// The remote actor is not published or no longer alive.
  no_such_actor,
  /// A store object could not be transferred to the receiving node.
  transfer_failed,
  /// The configuration holds an invalid value.
  invalid_config,
  /// The receiving node could not decode the message.
  decode_failed,
  /// No credit came back from the peer within `send_timeout`: its actors
  /// take messages slower than they arrive (the link is still up).
  send_timeout,
  /// The link already keeps `max_proxies` proxies of the peer's live
  /// actors; a message from yet another of its actors is refused.
  too_many_proxies,
  /// The peer has `max_spawned_actors` live actors spawned on this node over
  /// the link already (or may spawn none: the setting is 0); its
  /// `remote_spawn` is refused.
  too_many_actors,
  /// This node holds `max_held_bytes` or `max_held_messages` of the peer's
  /// messages that its actors have not processed yet (the peer sends beyond
  /// its credit window); the message is refused.
  receiver_full,
  /// The message's type has another shape on the peer's build (a member
  /// added, removed, renamed, reordered or of another type, or another
  /// declared version): it is refused before any decoding, on both nodes.
  /// See docs/evolution.md.
  type_mismatch,
  /// A same-host lane (the shared-memory rings two nodes of one host send
  /// through) could not be made, or the peer broke its ring; the link then
  /// uses its TCP connection, or goes down when the lane broke.
  lane_failed,
  /// The peer has a link with this node already (a second connection, or
  /// the two nodes connected to each other at once): this connection
  /// closes and the existing link serves.
  already_linked,
  /// A node asked to join a cluster of another name or protocol version,
  /// or asked a node that is not a member (yet, or any more); the text
  /// names both sides.
  cluster_refused,
  /// A response arrived on a link for a request this node's actor did not
  /// send on that link, or answered already (or whose asker ended): only
  /// the node a request went to answers it, once. Refused and counted on
  /// the link it came on; the link stays up.
  unasked_response,
  /// The link has `max_pending_requests` requests of this node's actors
  /// waiting for answers; the oldest of them fails with this error to make
  /// room for a new one.
  too_many_requests,
  /// A save from an entity's activation that loaded an older version than
  /// the one stored: refused, and the activation stops.
  state_conflict,
  /// The entities' state database failed or cannot be reached.
  state_store_failed,
  /// A message named an entity type that no member registered
  /// (`node_config::add_entity_type`).
  unknown_entity_type,
  /// An entity key is empty or longer than `ferry.entities.max-key-bytes`.
  invalid_entity_key,
  /// The entity cannot take the message now: its shard is moving and the
  /// messages buffered for it reached `ferry.entities.max-buffered`, no
  /// member can hold it, or the node hosts no entities.
  entity_unavailable,
};

/// Returns the name of `x`, e.g. `"no_common_family"`.
std::string to_string(errc x);

/// Returns any ferry error (`ferry_fw`, `ferry_ser`, `ferry_sto`) rendered for
/// humans, and other errors as `caf::to_string` does (`"none"` for no
/// error, such as the reason of an actor that ended normally).
std::string render(const caf::error& x);

} // namespace ferry

CAF_ERROR_CODE_ENUM(ferry::errc, "ferry_fw")
