// wire_message and wire_batch: user messages on their way between nodes.
//
// A `wire_message` carries one user message: its target and sender actor
// ids, CAF's message id (requests and responses keep CAF's semantics), the
// link's token, and per element the payload header a family wrote and its
// frames. A `wire_batch` carries small messages sent in a burst as one CAF
// message. Both are written flat (docs/wire-format.md), not field by field:
// CAF 0.17 pays a virtual call and a caf::error value per field, which for a
// 64-byte message cost more than the message.
//
// Reading treats bytes as hostile: every count and length is checked
// against the bytes the deserializer holds before anything is allocated,
// and a malformed message reads as an error (`errc::decode_failed`), never
// as a crash.
//
// Thread-safety: value types; distinct objects may be used by distinct
// threads.
#pragma once

#include "wire/bytes.hpp"
#include "wire/protocol.hpp"

#include "ferry/store/object_ref.hpp"

#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>

#include <boost/container/small_vector.hpp>

#include <cstdint>
#include <utility>
#include <vector>

namespace ferry::detail {

/// One frame of an encoded element.
struct wire_frame {
  /// A `frame_kind`.
  uint8_t kind = 0;
  /// The bytes the frame decodes to (inline kinds: checked against `data`).
  uint64_t size = 0;
  /// The store object of `store_object`, `remote_handle`, `inline_handle`.
  uint64_t object_id = 0;
  /// The store ticket (`store_object`) or transfer id (pulled kinds).
  uint64_t ticket = 0;
  /// The bytes of inline kinds (empty for the others).
  wire_bytes data;
};

/// Sequences that almost always hold one item (one element per message, one
/// frame per small element) keep it inline: the small messages that dominate
/// round trips then allocate no vector on either side.
template <class T>
using inline_one = boost::container::small_vector<T, 1>;

/// One message element: the payload header (ferry's fixed header codec) and
/// its frames.
struct wire_element {
  wire_bytes header;
  inline_one<wire_frame> frames;
};

/// A user message on its way to an actor on the receiving node.
struct wire_message {
  /// Actor id on the receiving node.
  uint64_t target = 0;
  /// Actor id of the sender on the sending node (0: anonymous).
  uint64_t sender = 0;
  /// `caf::message_id` value: requests and responses keep CAF's semantics.
  uint64_t mid = 0;
  /// The link's token (see wire/protocol.hpp).
  uint64_t token = 0;
  /// Set for error responses (the content is then this error alone).
  caf::error error;
  /// The encoded elements.
  inline_one<wire_element> elements;
  /// Receiving side only, never on the wire: local copies of the sender's
  /// store objects (sender's object id, copy). `remote_handle` frames are
  /// filled in by the puller before the message is decoded; `inline_handle`
  /// frames by `load` when the reading system has a read context (the
  /// frame's `data` is then a view of the copy), else by decoding.
  std::vector<std::pair<uint64_t, store::object_ref>> imports;

  /// Writes the message flat (docs/wire-format.md).
  caf::error save(caf::serializer& sink) const;

  /// Reads a message, checking every count and length against the bytes
  /// the deserializer holds before allocating: hostile input gets an error.
  caf::error load(caf::deserializer& source);
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, wire_message& x) {
  return inspect_by_hand(f, x, [&] {
    auto n = static_cast<uint64_t>(x.elements.size());
    return f(caf::meta::type_name("ferry.msg"), x.target, x.sender, x.mid,
             x.token, x.error, n);
  });
}

/// Small wire messages a link sent in a burst, in order, as one CAF message
/// (see link/outbox.hpp): CAF's cost per message (BASP header, two reads, a
/// mailbox element) is paid once per batch.
struct wire_batch {
  std::vector<wire_message> messages;

  /// Writes the count, then each message flat.
  caf::error save(caf::serializer& sink) const;

  /// Reads a batch, checking the count against the bytes left first.
  caf::error load(caf::deserializer& source);
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, wire_batch& x) {
  return inspect_by_hand(f, x, [&] {
    auto n = static_cast<uint64_t>(x.messages.size());
    return f(caf::meta::type_name("ferry.batch"), n);
  });
}

/// Returns whether `msg` has frames the receiver must pull first.
bool has_pulled_frames(const wire_message& msg);

/// Returns the bytes `frame` counts as: what it decodes to, whether it
/// travels inline, compressed, in the store or by pull.
uint64_t frame_bytes(const wire_frame& frame);

/// Returns the bytes `msg` counts against a credit window (both nodes
/// compute the same figure; saturates at a peer's wild claims).
uint64_t wire_size(const wire_message& msg);

} // namespace ferry::detail
