// Counters and negotiated settings of one link, as read from a node.
//
// A snapshot: the counters keep moving while the link carries traffic.
#pragma once

#include "ferry/histogram_stats.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ferry {

/// What a node knows about one of its links.
struct link_stats {
  /// Name of the peer node.
  std::string peer;
  /// Whether the two nodes share a host store (large frames go by handle).
  bool same_host = false;
  /// Whether this node sends to the peer through a same-host lane (shared
  /// memory) instead of the TCP connection (`link_config::lane`).
  bool lane = false;
  /// Whether the link's TCP connection runs TLS (`ferry.tls.*`).
  bool tls = false;
  /// Families this node may send with on this link, in preference order: its
  /// `serializers` that the peer accepts.
  std::vector<std::string> send_families;
  /// Messages this node sent on the link.
  uint64_t messages_sent = 0;
  /// Messages this node received and delivered.
  uint64_t messages_received = 0;
  /// Frame bytes sent inline (inside message frames).
  uint64_t bytes_inline_sent = 0;
  /// Frame bytes received inline.
  uint64_t bytes_inline_received = 0;
  /// Frame bytes sent as store handles (same host).
  uint64_t bytes_spilled_sent = 0;
  /// Frame bytes received as store handles.
  uint64_t bytes_spilled_received = 0;
  /// Frame bytes the peer pulled from this node in chunks (cross host).
  uint64_t bytes_pulled_by_peer = 0;
  /// Frame bytes this node pulled from the peer in chunks.
  uint64_t bytes_pulled = 0;
  /// Bytes of store objects of other nodes that the peer pulled from this
  /// node's copies (this node relayed them; docs/architecture.md,
  /// "Broadcast").
  uint64_t bytes_relayed_to_peer = 0;
  /// Bytes of store objects of other nodes that this node pulled from the
  /// peer's copies, not from their owners.
  uint64_t bytes_relayed_by_peer = 0;
  /// Incoming messages this node refused (family not allowed, undecodable,
  /// too large, unknown target).
  uint64_t refusals = 0;
  /// `refusals` by reason: the name of the error the sender heard
  /// (`family_refused`, `no_such_actor`, `receiver_full`, ... as in
  /// ferry/errc.hpp, or `other`); reasons never seen are left out.
  std::map<std::string, uint64_t> refusals_by_reason;
  /// Outgoing messages the peer refused (reported back by the peer).
  uint64_t refused_by_peer = 0;
  /// Answers from the peer to requests this node is not waiting for
  /// (answered after their timeout, or never asked), dropped.
  uint64_t unasked_answers = 0;
  /// Outgoing messages that failed before sending (no family, too large,
  /// no credit in time, a lane closed while the link went down).
  uint64_t send_errors = 0;
  /// Times a sender waited for credit (the window was full).
  uint64_t credit_waits = 0;
  /// Seconds senders spent waiting for credit, summed over every wait.
  double credit_wait_seconds = 0;
  /// Most bytes ever in flight on the link (sent, not yet processed by the
  /// receiving actors); stays within `window_bytes` plus one message.
  uint64_t peak_in_flight_bytes = 0;
  /// Requests sent on the link still waiting for their response, of
  /// requesters still alive.
  uint64_t pending_requests = 0;
  /// Credit messages received from the peer: about one per quarter window
  /// of traffic, plus one per probe this node sent while its window was full.
  uint64_t credits_received = 0;
  /// Frames that carried a burst of several small messages (see
  /// `link_config::batch_messages`), and the messages they carried.
  uint64_t batches_sent = 0;
  uint64_t messages_batched = 0;
  /// Messages per frame this node sent on the link (1 for a message
  /// sent alone, the batch's size for a batch).
  histogram_stats batch_messages;
  /// Store tickets of sent messages the peer has not yet reported taken
  /// (cancelled if the link dies); bounded by the credit window.
  uint64_t tickets_in_transit = 0;
  /// Large frames this node holds for the peer to pull (across hosts):
  /// each goes when the peer has pulled it, or has taken its message.
  uint64_t transfers_held = 0;
  /// Proxies this node keeps of the peer's actors (at most
  /// `link_config::max_proxies` for senders the peer names).
  uint64_t proxies = 0;
  /// Actors this node spawned for the peer (`node::remote_spawn` there)
  /// that are still alive (at most `link_config::max_spawned_actors`); the
  /// link terminates them when it goes down.
  uint64_t spawned_actors = 0;
  /// The peer's messages this node holds that its actors have not processed
  /// yet (in mailboxes or queued behind a pulled frame), and their bytes as
  /// the credit window counts them; bounded by `link_config::max_held_*`.
  uint64_t held_messages = 0;
  uint64_t held_bytes = 0;
  /// Messages sent per family.
  std::map<std::string, uint64_t> sent_by_family;
  /// Messages received per family.
  std::map<std::string, uint64_t> received_by_family;
  /// Seconds spent encoding one element of a sent message, per family
  /// (families never used are left out).
  std::map<std::string, histogram_stats> encode_seconds;
  /// Seconds spent decoding one element of a received message, per family.
  std::map<std::string, histogram_stats> decode_seconds;
};

} // namespace ferry
