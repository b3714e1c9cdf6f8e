// ferry's wire types: what one node sends another through CAF's middleman.
//
// These are ferry's fixed control format (DESIGN.md: "small control traffic
// uses one fixed format, never a user-selectable family"): plain structs with
// CAF 0.17 `inspect`, registered with CAF under "ferry.*" names by
// `register_wire_types`. User values never reach CAF's serializer: they are
// encoded by a family into payload frames, which travel here as `wire_bytes`.
//
// `wire_bytes` is the one type with hand-written serialization: on the sending
// side it is a view of memory owned elsewhere (the user's value, kept alive by
// `keep_alive`), written with one `apply_raw`; on the receiving side it reads
// into an owned buffer after checking the claimed length against the bytes
// the deserializer actually holds, so a hostile length never allocates.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/serializer.hpp>

#include "ferry/store/object_builder.hpp"
#include "ferry/store/object_store.hpp"
#include "ferry/store/object_ref.hpp"

#include "ferry/serializers/detail/fresh_memory.hpp"
#include "ferry/serializers/detail/vector_pool.hpp"

#include <boost/container/small_vector.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace ferry::detail {

/// Protocol version of ferry's wire types and of the payload forms the
/// built-in families put in them; peers with another version are refused at
/// the handshake. 7: cereal.json sends a large top-level array as a JSON
/// head and a frame of its elements (a peer at 6 would fail to read it as
/// JSON text). 8: a message's error travels with its length (a peer at 7
/// writes it without). 9: every message and control message on a link
/// carries the link's token (`hello::link_token`).
inline constexpr uint32_t wire_protocol_version = 9;

/// Link tokens. CAF's BASP believes the source node a peer writes into a
/// routed message, so a node connected to two others could otherwise send
/// messages on their link as either. In its hello each node names the token
/// it expects on what the peer sends it over that link: 64 random bits,
/// fresh for each link, sent only to that peer. Every link-scoped wire type
/// carries it (`token`); the gateway drops what lacks it
/// (`link_stats::dropped_wrong_token`).

/// CAF 0.17 `inspect` for a wire type that writes and reads itself
/// (`save`/`load`); any other inspector (CAF's to_string) gets `summary()`.
template <class Inspector, class T, class Summary>
typename Inspector::result_type inspect_by_hand(Inspector& f, T& x,
                                                Summary summary) {
  if constexpr (std::is_base_of_v<caf::serializer, Inspector>) {
    return x.save(f);
  } else if constexpr (std::is_base_of_v<caf::deserializer, Inspector>) {
    return x.load(f);
  } else {
    return summary();
  }
}

/// The next `n` bytes of `source`, where CAF holds them.
/// REQUIRES: `n <= source.remaining()`.
inline std::span<const std::byte> next_bytes(caf::binary_deserializer& source,
                                             uint64_t n) {
  return {reinterpret_cast<const std::byte*>(source.remainder().data()),
          static_cast<size_t>(n)};
}

/// Bytes on the wire: a view when sending, an owned buffer when received.
class wire_bytes {
public:
  wire_bytes() = default;

  /// A view of `bytes`, kept valid by `keep_alive`.
  wire_bytes(std::span<const std::byte> bytes,
             std::shared_ptr<const void> keep_alive)
    : view_(bytes), keep_alive_(std::move(keep_alive)) {
    // nop
  }

  /// Owns `bytes`; a large buffer goes back to the vector pool when the last
  /// frame sharing it is gone (unless a decoder took it over).
  explicit wire_bytes(std::vector<std::byte> bytes)
    : owned_(serializers::detail::shared_pooled(std::move(bytes))) {
    view_ = {owned_->data(), owned_->size()};
    keep_alive_ = owned_;
  }

  /// Takes the next `n` bytes of `source` into an owned buffer, copied
  /// straight from its buffer (not zero-filled first).
  /// REQUIRES: `n <= source.remaining()`.
  static wire_bytes take_from(caf::binary_deserializer& source, size_t n) {
    std::vector<std::byte> buf;
    serializers::detail::assign_fresh(buf, next_bytes(source, n).data(), n);
    source.skip(n);
    return wire_bytes{std::move(buf)};
  }

  /// Returns the bytes.
  std::span<const std::byte> bytes() const { return view_; }

  /// Returns the number of bytes.
  size_t size() const { return view_.size(); }

  /// Returns what keeps the bytes alive (shared with frames made from them).
  const std::shared_ptr<const void>& keep_alive() const { return keep_alive_; }

  /// Returns whether this object owns its buffer and nothing else shares it
  /// (then `take` moves the bytes out without a copy).
  bool sole_owner() const {
    // owned_ and keep_alive_ are two references to the same buffer.
    return owned_ != nullptr && owned_.use_count() == 2;
  }

  /// Moves the bytes out (requires `sole_owner()`); leaves this empty.
  std::vector<std::byte> take() {
    auto result = std::move(*owned_);
    *this = wire_bytes{};
    return result;
  }

  /// Saves: length, then the bytes in one block.
  caf::error save(caf::serializer& sink) const {
    uint64_t n = view_.size();
    if (auto err = sink(n))
      return err;
    if (n == 0)
      return caf::none;
    return sink.apply_raw(n, const_cast<std::byte*>(view_.data()));
  }

  /// Loads: length, checked against the bytes left, then the bytes (copied
  /// straight from a binary deserializer's buffer, without zeroing first).
  caf::error load(caf::deserializer& source) {
    uint64_t n = 0;
    if (auto err = source(n))
      return err;
    return load_body(source, n);
  }

  /// Loads the `n` bytes after the length (see `load`).
  caf::error load_body(caf::deserializer& source, uint64_t n) {
    auto bin = dynamic_cast<caf::binary_deserializer*>(&source);
    if (bin != nullptr && n > bin->remaining())
      return caf::make_error(caf::sec::end_of_stream,
                             "ferry wire_bytes claims " + std::to_string(n)
                               + " bytes but the message holds only "
                               + std::to_string(bin->remaining()));
    if (bin != nullptr) {
      *this = take_from(*bin, n);
      return caf::none;
    }
    std::vector<std::byte> buf(n);
    if (n > 0)
      if (auto err = source.apply_raw(n, buf.data()))
        return err;
    *this = wire_bytes{std::move(buf)};
    return caf::none;
  }

private:
  std::span<const std::byte> view_;
  std::shared_ptr<const void> keep_alive_;
  std::shared_ptr<std::vector<std::byte>> owned_;
};

/// Where a pulled frame lands: an owned buffer of the frame's size, or a new
/// object of this host's store (a store handle pulled from another host),
/// that its chunks are copied into as they arrive, from the puller or,
/// straight from CAF's receive buffer, from a BASP worker reading a
/// `chunk_reply` (so every call locks). An owned frame ends as a
/// `std::vector`, which a `raw` decoder adopts without a copy; a store object
/// ends sealed.
class landing_buffer {
public:
  /// Makes room for `size` bytes: a vector of the vector pool when it has
  /// one (holding an earlier message's bytes until the chunks overwrite
  /// them), else fresh address space (huge-page candidates when large).
  /// Fresh memory is zero-filled by `prepare`, as chunks are asked for, so
  /// what a peer merely claims costs address space, not memory. Throws
  /// std::bad_alloc when the address space is not there.
  explicit landing_buffer(uint64_t size);

  /// Lands the chunks in `object` (an unsealed store object).
  explicit landing_buffer(store::object_builder object);

  /// Makes the first `end` bytes writable before the chunk ending there is
  /// asked for (no effect on a store object or a part already prepared).
  /// REQUIRES: `end` is at most the frame's size.
  void prepare(uint64_t end);

  /// Writes `bytes` at `offset`. Returns false, writing nothing, when they
  /// reach beyond the prepared part of the frame.
  bool land(uint64_t offset, std::span<const std::byte> bytes);

  /// Returns the owned frame's bytes and leaves this empty. REQUIRES: every
  /// byte has landed (the puller takes a frame only then; before, a reused
  /// buffer still holds an earlier message's bytes).
  std::vector<std::byte> take();

  /// Seals the store object and returns its handle; this is empty after.
  caf::expected<store::object_ref> seal();

private:
  /// Where chunks land: the store object's bytes or the prepared part of
  /// the owned frame (empty once sealed or taken). Requires `mtx_`.
  std::span<std::byte> target() {
    return object_ ? object_.bytes() : std::span<std::byte>{buf_};
  }

  std::mutex mtx_;
  /// The owned frame: its capacity is the frame's size, its size the part
  /// prepared so far.
  std::vector<std::byte> buf_;
  store::object_builder object_;
};

/// Registers the place of one chunk of `target` for a `chunk_reply` to land
/// in; returns its key (never 0, drawn from std::random_device). The
/// registry holds `target` weakly: a frame given up meanwhile is not kept.
uint64_t register_landing(std::weak_ptr<landing_buffer> target,
                          uint64_t offset, uint64_t length);

/// Forgets a landing; nothing happens when it was claimed or is unknown.
void release_landing(uint64_t key);

/// Share of an import store's capacity that objects landed ahead of their
/// delivery may take (see `register_import_store`).
inline constexpr uint64_t import_ahead_share = 8;

/// Lets `wire_message::load` put the bytes of `inline_handle` frames (store
/// objects from another host, small enough to travel with the message)
/// straight from CAF's receive buffer into new sealed objects of `store`
/// when the actor system `sys` reads a message, instead of into a buffer
/// that decoding then copies into the store: one copy of every such object
/// less.
///
/// CAF reads messages ahead of their delivery (18 MiB of 1 MiB messages in
/// a stream, measured), and a landed object cannot be spilled while its
/// message holds it, so landing everything would let messages not yet
/// delivered fill the store and make the decoding of others fail with
/// store_full. Objects landed and not yet delivered therefore take at most
/// 1/`import_ahead_share` of the store's capacity; beyond that, and without
/// a store registered for the reading system (or when the store cannot take
/// an object), frames are read into memory and decoding copies them into
/// the store when it delivers the message, naming the store's error if that
/// fails too.
void register_import_store(const caf::actor_system* sys,
                           store::object_store store);

/// Undoes `register_import_store` (before the store goes away); messages
/// read afterwards take the copying path.
void unregister_import_store(const caf::actor_system* sys);

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, wire_bytes& x) {
  return inspect_by_hand(f, x, [&] {
    auto n = static_cast<uint64_t>(x.size());
    return f(caf::meta::type_name("ferry.bytes"), n);
  });
}

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

/// Returns whether a frame of `kind` carries its bytes outside the wire
/// message (in the store or with the sender): its `size` says how many.
constexpr bool is_out_of_band(frame_kind kind) {
  return kind == frame_kind::store_object || is_pulled(kind);
}

/// One frame of an encoded element.
struct wire_frame {
  uint8_t kind = 0;
  uint64_t size = 0;
  uint64_t object_id = 0;
  uint64_t ticket = 0;
  wire_bytes data;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, wire_frame& x) {
  return f(caf::meta::type_name("ferry.frame"), x.kind, x.size, x.object_id,
           x.ticket, x.data);
}

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

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, wire_element& x) {
  return f(caf::meta::type_name("ferry.element"), x.header, x.frames);
}

/// A user message on its way to an actor on the receiving node.
///
/// Written flat (see wire.cpp), not field by field: CAF 0.17 pays a virtual
/// call and a caf::error value per field and a std::function call per
/// caf::error, which for a 64-byte message cost more than the message. The
/// fixed fields of the message, its elements and frames go as one block
/// ("the head"), followed by the header and data bytes of every frame in
/// order, and the error only when there is one.
struct wire_message {
  /// Actor id on the receiving node.
  uint64_t target = 0;
  /// Actor id of the sender on the sending node (0: anonymous).
  uint64_t sender = 0;
  /// `caf::message_id` value: requests and responses keep CAF's semantics.
  uint64_t mid = 0;
  /// The link's token (see `wire_protocol_version`).
  uint64_t token = 0;
  /// Set for error responses (the content is then this error alone).
  caf::error error;
  /// The encoded elements.
  inline_one<wire_element> elements;
  /// Receiving side only, never on the wire: local copies of the sender's
  /// store objects (sender's object id, copy). `remote_handle` frames are
  /// filled in by the puller before the message is decoded; `inline_handle`
  /// frames by `load` when the reading system has an import store (the
  /// frame's `data` is then a view of the copy), else by decoding.
  std::vector<std::pair<uint64_t, store::object_ref>> imports;

  /// Writes the message (see above).
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

/// Returns whether `msg` has frames the receiver must pull first.
inline bool has_pulled_frames(const wire_message& msg) {
  for (auto& element : msg.elements)
    for (auto& frame : element.frames)
      if (is_pulled(static_cast<frame_kind>(frame.kind)))
        return true;
  return false;
}

/// A batch holds at most this many messages. A sender flushes its batch at
/// 256 KiB and counts every message as at least 64 bytes (link.cpp), so its
/// batches hold 4097 at most; a receiver refuses more before allocating (a
/// wire_message takes about 230 bytes in memory whatever its wire size).
inline constexpr uint32_t max_batch_messages = 8192;

/// Small wire messages a link sent in a burst, in order, as one CAF message
/// (see link_state::post): CAF's cost per message (BASP header, two reads,
/// a worker hand-off, a mailbox element) is paid once per batch.
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

  /// Saves the protocol, then every other field.
  caf::error save(caf::serializer& sink) const;

  /// Loads the protocol and, only when it is this node's, the other
  /// fields: a hello of another version (whose fields may differ) still
  /// reads, and `node_impl::accept` refuses it naming both versions,
  /// instead of CAF dropping a message it cannot read and the peer waiting
  /// for its handshake to time out.
  caf::error load(caf::deserializer& source);
};

/// Applies `f` to the fields of `x` after its protocol.
template <class F, class Hello>
auto hello_fields(F& f, Hello& x) {
  return f(x.node_name, x.host_id, x.store_name, x.has_store, x.store_token,
           x.serializers, x.deserializers, x.decodable, x.gateway,
           x.default_actor, x.window_bytes, x.window_messages, x.link_token);
}

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

/// A chunk of a pulled frame, as its owner sends it back (the response to a
/// `chunk_request`). The request names a *landing*: a key the receiver
/// registered for that chunk's place in its frame (`register_landing`).
/// When a reply is read whose landing is registered for exactly its length,
/// its bytes are copied straight from CAF's receive buffer into the frame
/// (`landed`), one copy less per pulled byte than reading them into `data`
/// and copying that into the frame; the landing is used up. Otherwise they
/// are read into `data` like any wire_bytes. Keys are 64 random bits per
/// chunk, so a peer cannot reach a landing of another link but by guessing;
/// the puller checks that a landed reply names the landing it asked for.
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

/// Registers every wire type with CAF under its "ferry.*" name.
void register_wire_types(caf::actor_system_config& cfg);

} // namespace ferry::detail
