// Per-link settings of a ferry node.
//
// A link is the connection between two nodes (a TCP connection of ferry's
// own, plain or TLS, and between nodes of one host a same-host lane). Each link
// has a `link_config`: which families the node sends with (`serializers`, a
// preference list), which it accepts (`deserializers`, an allowlist), when
// frames leave the message for the store (`spill_threshold`), compression,
// size limits and the credit window that keeps a fast sender from queueing
// unbounded bytes. A node holds one config per named peer plus a default for
// every peer not named; see `node_config`.
//
// Config file (CAF's INI syntax) and flags:
//
//     [ferry.link]                     # --ferry.link.serializers=[...] etc.
//     serializers = ["raw", "cereal.binary", "caf"]
//     [ferry.links]                    # per peer node name
//     node-b = { serializers = ["cereal.portable"],
//                deserializers = ["cereal.portable", "msgpack"] }
//
// Plain value type; not synchronized.
#pragma once

#include <caf/expected.hpp>
#include <caf/settings.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace ferry {

/// Compression of inline frames on a link.
enum class compression : uint8_t {
  /// Frames travel as they are.
  none,
  /// LZ4 (fast; from liblz4).
  lz4,
  /// Zstandard (smaller; from libzstd).
  zstd,
};

/// Returns "none", "lz4" or "zstd".
std::string to_string(compression x);

/// Parses "none", "lz4" or "zstd".
[[nodiscard]] caf::expected<compression>
parse_compression(const std::string& x);

/// Settings of one link. Defaults work with no configuration at all.
struct link_config {
  /// Families to send with, first match wins (Dask's `serializers=`). A
  /// message uses the first family here that the peer accepts and that can
  /// encode its type.
  std::vector<std::string> serializers = default_families();

  /// Families accepted on receipt (Dask's `deserializers=`); anything else is
  /// refused with `errc::family_refused`.
  std::vector<std::string> deserializers = default_families();

  /// Between nodes that share the host store, frames of at least this many
  /// bytes go into the store and travel as counted handles (the receiver
  /// reads them in place). Default 100 KiB (Ray's inline limit).
  uint64_t spill_threshold = 100 * 1024;

  /// Codec for inline frames of at least `compression_threshold` bytes.
  ferry::compression compression = ferry::compression::none;

  /// Smallest inline frame that gets compressed.
  uint64_t compression_threshold = 64 * 1024;

  /// Largest message (all frames of all elements) the link carries in either
  /// direction; larger ones are refused with `errc::message_too_large`.
  uint64_t max_message_size = uint64_t{16} << 30;

  /// Credit window: bytes sent but not yet processed by the receiving actors.
  /// Frames count at their full size however they travel (inline,
  /// compressed, through the host store, pulled): the receiver holds them
  /// all the same. Waiting senders get credit in the order they came; a
  /// message larger than the window goes when nothing else is in flight.
  uint64_t window_bytes = uint64_t{256} << 20;

  /// Credit window: messages sent but not yet processed.
  uint64_t window_messages = 4096;

  /// How long a sender waits for credit before the message is refused.
  std::chrono::milliseconds send_timeout{30000};

  /// Between nodes that share no store, frames of at least this many bytes
  /// stay with the sender and the receiver pulls them in chunks (bounded
  /// memory on both sides); smaller frames travel inline.
  uint64_t pull_threshold = uint64_t{8} << 20;

  /// Size of one chunk when a receiver pulls a large frame from its owner.
  uint64_t chunk_size = uint64_t{4} << 20;

  /// Chunks a receiver keeps requested at once per transfer.
  uint32_t chunks_in_flight = 4;

  /// Small messages sent in a burst travel together, up to this many in one
  /// frame (the cost of a write and a wake-up is paid once per batch); 1
  /// sends every message on its own. Order is kept either way.
  uint32_t batch_messages = 64;

  /// A message sent within this time of the previous one on the link counts
  /// as part of a burst and may wait (a scheduler hop, microseconds) for
  /// the batch to fill; a message after a pause goes out at once, so
  /// request/response latency is unchanged.
  std::chrono::microseconds batch_gap{20};

  /// Between nodes that share the host store, messages travel through a
  /// *same-host lane* (two shared-memory rings, one per direction) instead
  /// of the TCP connection: the same frames, order, credit, limits and
  /// refusals, a fraction of the CPU and latency. Used in a direction when
  /// both nodes have it on; without a store, across hosts, or when a ring
  /// cannot be made, the link uses its TCP connection
  /// (docs/architecture.md).
  bool lane = true;

  /// Size of the ring this node receives a same-host lane's messages
  /// through (a power of two from 64 KiB to 1 GiB). A sender whose message
  /// does not fit waits for the reader to make room; a message larger
  /// than the ring streams through it. Memory: the pages the ring touched,
  /// shared by the two processes. Default 8 MiB.
  uint64_t lane_bytes = uint64_t{8} << 20;

  /// How long this node's reader of a same-host lane polls its empty ring
  /// (yielding its core between looks) before it sleeps on it: a message
  /// that follows within this time costs neither process a wake-up, which
  /// is most of a same-host round trip. The reader stops polling while
  /// polls keep finding nothing (it tries again every 16th wait), so a
  /// quiet link costs no CPU; a link that receives a message at least
  /// every `lane_spin` keeps its reader busy. 0: sleep at once. At most
  /// 10 ms.
  std::chrono::microseconds lane_spin{200};

  /// Most proxies the link keeps of the peer's actors that sent to this
  /// node. A proxy goes when the peer reports its actor's end, so this
  /// bounds the peer's live actors talking to this node; a message from one
  /// more is refused with `errc::too_many_proxies` (a peer inventing sender
  /// ids cannot grow the table without end). Proxies this node asks for
  /// (`node::remote_actor`, `node::remote_spawn`) are made even above it.
  uint64_t max_proxies = 65536;

  /// Most requests of this node's actors the link remembers while they
  /// wait for their answers. A response is delivered only when it answers
  /// such a request (the node it went to answers it, once); a request
  /// leaves the table when answered, when its asker ends, or when the link
  /// goes down. CAF tells no link a request's timeout, so a request never
  /// answered stays until its asker ends: when the table is full, the
  /// oldest request fails with `errc::too_many_requests` to make room.
  uint64_t max_pending_requests = 65536;

  /// Most live actors the peer may have spawned on this node over the link
  /// (its `node::remote_spawn`); one more is refused with
  /// `errc::too_many_actors` until one of them ends, so a peer cannot fill
  /// this node with actors. 0: the peer may spawn nothing here (actors it
  /// finds by name stay reachable).
  uint64_t max_spawned_actors = 65536;

  /// Most bytes of the peer's messages this node holds before its actors
  /// have processed them (in mailboxes, or queued behind a frame being
  /// pulled), counted like the credit window. A well-behaved peer keeps to
  /// its own `window_bytes`; a message that would take a peer above this
  /// is refused with `errc::receiver_full` (a request gets the error as its
  /// answer), so a peer that ignores credit cannot fill this node's memory.
  /// A message is always taken when nothing of the peer's is held, however
  /// large. Responses to this node's own pending requests are never refused:
  /// its actors asked for them. Default: 4 × the default `window_bytes`.
  uint64_t max_held_bytes = uint64_t{1} << 30;

  /// Most messages of the peer this node holds before its actors have
  /// processed them (see `max_held_bytes`). Default: 4 × the default
  /// `window_messages`.
  uint64_t max_held_messages = 16384;

  /// The link sends a heartbeat on its connection when it sent nothing for
  /// this long (also beside a same-host lane, whose peer it watches).
  std::chrono::milliseconds heartbeat_interval{5000};

  /// The link goes down when nothing arrived on its connection for this
  /// long: the peer's host or process stopped answering. Large frames
  /// travel in chunks, so a slow but live transfer keeps its link.
  std::chrono::milliseconds connection_timeout{30000};

  /// On a TLS node: this link may be plain (TCP without TLS). The node
  /// connects to the peer's address without TLS and accepts a plain
  /// connection from a peer of this name; every other link of a TLS node
  /// is TLS, and a plain peer is refused, never silently taken. No effect
  /// on a plain node (its links are all plain).
  bool plain = false;

  /// Returns the built-in families in ferry's default order.
  static std::vector<std::string> default_families();

  /// Returns `base` with every key present in `section` overridden. Keys use
  /// dashes (`spill-threshold`). Unknown keys are an error naming the key.
  [[nodiscard]] static caf::expected<link_config>
  from_settings(const caf::settings& section, link_config base);
};

} // namespace ferry
