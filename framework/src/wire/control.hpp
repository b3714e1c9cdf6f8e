// ferry's control messages: handshakes, credit, notices, chunks, spawns.
//
// Small control traffic between nodes uses this one fixed format, never a
// user-selectable family (DESIGN.md): plain structs with CAF 0.17 `inspect`,
// written by CAF's binary serializer. Every type that belongs to a link
// carries the link's `token` (wire/protocol.hpp); the gateway drops what
// lacks it. `hello` and `chunk_reply` write and read themselves: a hello is
// read only as far as its version when the version differs, and a chunk
// reply's bytes may land straight in the frame being pulled
// (wire/read_context.hpp). docs/wire-format.md has every field.
//
// Thread-safety: value types.
#pragma once

#include "wire/bytes.hpp"
#include "wire/message.hpp"
#include "wire/protocol.hpp"

#include <caf/actor.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ferry::detail {

/// Handshake, both directions: who I am and what I accept.
struct hello {
  uint32_t protocol = wire_protocol_version;
  std::string node_name;
  std::string host_id;
  std::string store_name;
  bool has_store = false;
  /// My store's token (names it in serialized handles); 0 without a store.
  uint64_t store_token = 0;
  /// My preference list for this link.
  std::vector<std::string> serializers;
  /// My allowlist for this link.
  std::vector<std::string> deserializers;
  /// Families my registry can decode at all.
  std::vector<std::string> decodable;
  /// My node's gateway (CAF turns it into a proxy on the other side).
  caf::actor gateway;
  /// Id of my published default actor (0: none).
  uint64_t default_actor = 0;
  /// My credit window for this link (the receiver batches credit by it).
  uint64_t window_bytes = 0;
  uint64_t window_messages = 0;
  /// The token I expect on everything you send me over this link.
  uint64_t link_token = 0;
  /// The names of my registered types, sorted, and their shapes
  /// (ferry/serializers/shape.hpp), at the same positions.
  std::vector<std::string> type_names;
  std::vector<std::string> type_shapes;
  /// The shared-memory ring I created to receive this link's messages
  /// through a same-host lane (lane/ring.hpp); empty: no lane. In an
  /// answer, non-empty also says that I send through the asker's ring.
  std::string lane;

  /// Saves the protocol, then every other field.
  caf::error save(caf::serializer& sink) const;

  /// Loads the protocol and, only when it is this node's, the other
  /// fields: a hello of another version (whose fields may differ) still
  /// reads, and the handshake refuses it naming both versions, instead of
  /// CAF dropping a message it cannot read and the peer waiting for its
  /// handshake to time out.
  caf::error load(caf::deserializer& source);
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, hello& x) {
  return inspect_by_hand(f, x, [&] {
    return f(caf::meta::type_name("ferry.hello"), x.protocol, x.node_name);
  });
}

/// Ask the peer for its node name (first step of a handshake: the name
/// selects the link config).
struct identify {};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, identify&) {
  return f(caf::meta::type_name("ferry.identify"));
}

/// Ask the peer for the id of an actor it exposes under a name.
struct lookup {
  std::string name;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lookup& x) {
  return f(caf::meta::type_name("ferry.lookup"), x.name);
}

/// Credit returned by a receiver: messages and bytes its actors processed.
/// `delivered` counts every message the receiver has taken off this link so
/// far (delivered or refused): their store tickets are redeemed or
/// cancelled, so the sender forgets them.
struct credit {
  uint64_t messages = 0;
  uint64_t bytes = 0;
  uint64_t delivered = 0;
  uint64_t token = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, credit& x) {
  return f(caf::meta::type_name("ferry.credit"), x.messages, x.bytes,
           x.delivered, x.token);
}

/// A sender is waiting for credit: return what is processed now, and the
/// rest as soon as it is processed (receivers otherwise return credit in
/// batches of a quarter window).
struct credit_probe {
  uint64_t token = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, credit_probe& x) {
  return f(caf::meta::type_name("ferry.probe"), x.token);
}

/// An actor the peer knew about has terminated.
struct down_notice {
  uint64_t actor = 0;
  caf::error reason;
  uint64_t token = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, down_notice& x) {
  return f(caf::meta::type_name("ferry.down"), x.actor, x.reason, x.token);
}

/// Terminate one of the receiver's actors (an exit message sent to a proxy).
struct exit_request {
  uint64_t actor = 0;
  caf::error reason;
  uint64_t token = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, exit_request& x) {
  return f(caf::meta::type_name("ferry.exit"), x.actor, x.reason, x.token);
}

/// Link (or unlink) one of the receiver's actors with one of the sender's
/// (`link_to` / `unlink_from` between an actor and a proxy).
struct link_request {
  /// The receiver's actor (an actor it exported on this link).
  uint64_t actor = 0;
  /// The sender's actor (exported by the sender on this link).
  uint64_t partner = 0;
  /// true: link; false: unlink.
  bool establish = true;
  uint64_t token = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, link_request& x) {
  return f(caf::meta::type_name("ferry.link"), x.actor, x.partner,
           x.establish, x.token);
}

/// A one-way message was refused by the receiver (the sender logs and counts).
struct refusal {
  uint64_t target = 0;
  caf::error reason;
  uint64_t token = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, refusal& x) {
  return f(caf::meta::type_name("ferry.refusal"), x.target, x.reason,
           x.token);
}

/// Request for bytes of a frame the sender holds for a cross-host transfer.
struct chunk_request {
  uint64_t transfer = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  /// Echoed in the `chunk_reply` (0: none).
  uint64_t landing = 0;
  uint64_t token = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, chunk_request& x) {
  return f(caf::meta::type_name("ferry.chunk_req"), x.transfer, x.offset,
           x.length, x.landing, x.token);
}

/// Request for bytes of a store object that the asked node pulls (or
/// pulled) from another node, its owner: a receiver told by the owner to
/// pull from the asked node (wire/relay_hint.hpp) asks it first and falls
/// back to the owner. Answered like a `chunk_request`, by a `chunk_reply`.
struct relay_request {
  /// The object's relay key, from the owner's hint.
  uint64_t key = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  /// Echoed in the `chunk_reply`.
  uint64_t landing = 0;
  uint64_t token = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, relay_request& x) {
  return f(caf::meta::type_name("ferry.relay_req"), x.key, x.offset,
           x.length, x.landing, x.token);
}

/// A chunk of a pulled frame, as its owner (or a relaying node) sends it
/// back (the response to a `chunk_request` or a `relay_request`). The
/// request names a *landing*: a key the receiver registered for that
/// chunk's place in its frame. When a reply is read
/// whose landing is registered for exactly its length, its bytes are copied
/// straight from CAF's receive buffer into the frame (`landed`), one copy
/// less per pulled byte than reading them into `data` and copying that into
/// the frame; the landing is used up. Otherwise they are read into `data`
/// like any wire_bytes. Keys are 64 random bits per chunk, so a peer cannot
/// reach a landing of another link but by guessing; the puller checks that
/// a landed reply names the landing it asked for.
struct chunk_reply {
  uint64_t landing = 0;
  wire_bytes data;
  /// Set on reading when the bytes went into the frame (not on the wire).
  bool landed = false;

  /// Saves: the landing, then `data` as wire_bytes does.
  caf::error save(caf::serializer& sink) const;

  /// Loads: the landing, then the bytes, into the frame or into `data`.
  caf::error load(caf::deserializer& source);
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, chunk_reply& x) {
  return inspect_by_hand(f, x, [&] {
    auto n = static_cast<uint64_t>(x.data.size());
    return f(caf::meta::type_name("ferry.chunk"), x.landing, n);
  });
}

/// The receiver has all bytes of a transfer (or gave up): release it.
struct transfer_done {
  uint64_t transfer = 0;
  uint64_t token = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, transfer_done& x) {
  return f(caf::meta::type_name("ferry.xfer_done"), x.transfer, x.token);
}

/// Spawn an actor type registered on the receiving node.
struct spawn_request {
  std::string type_name;
  /// The constructor's arguments; carries the link's token.
  wire_message args;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, spawn_request& x) {
  return f(caf::meta::type_name("ferry.spawn"), x.type_name, x.args);
}

} // namespace ferry::detail
