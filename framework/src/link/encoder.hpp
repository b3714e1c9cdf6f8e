// encoder: turns a CAF message into a wire_message for one link.
//
// Each element is encoded by the registry with the link's send families
// (the first of its preference list that the peer accepts and that can
// encode the type), through a cached plan per type. Then each frame finds
// its way:
// - same host, at least `spill_threshold` bytes: into the store, as a
//   `store_object` frame carrying an in-band ticket;
// - other host, at least `pull_threshold` bytes: held as a transfer the
//   peer pulls (`remote_object`);
// - at least `compression_threshold` bytes with compression on: compressed
//   inline;
// - else inline: up to `small_frame_bytes`, copied with the payload header
//   into one block (one allocation for the element; the encode buffer goes
//   back to the thread for the next message), above as a view of the
//   encoded frame (no copy before the socket or the ring).
// Store handles inside a value travel as their tickets on one host; to
// another host their objects go along (`inline_handle`) or are pulled
// (`remote_handle`).
//
// Invariants: a ticket or transfer the encoder made is reported to the
// caller (`tickets`, `transfers`) even when encoding then fails, so the
// caller can cancel it; a message above max-message-size is refused before
// anything is sent.
//
// Thread-safety: every member function may be called from any thread at
// once; the plan cache is lock-free.
#pragma once

#include "link/link_context.hpp"
#include "link/plan_cache.hpp"
#include "link/thread_lease.hpp"
#include "transfer/transfer_table.hpp"
#include "wire/message.hpp"

#include "ferry/serializers/registry.hpp"

#include <caf/message.hpp>
#include <caf/message_id.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <typeindex>
#include <vector>

namespace ferry::detail {

class encoder {
public:
  /// Encodes with `send_families` (the link's serializers the peer accepts),
  /// timing each element in `sent_by_family`.
  encoder(const link_context& ctx, std::vector<std::string> send_families,
          transfer_table& transfers, family_counters& sent_by_family);

  /// Returns the families the link sends with.
  const std::vector<std::string>& send_families() const {
    return send_families_;
  }

  /// Encodes `msg` for actor `target` of the peer into `out` (a fresh
  /// wire_message, filled in place: it holds its first element inline, so
  /// moving it is not free), from this node's actor `sender` (0: none).
  /// Adds the store tickets and transfers it made to `tickets` and
  /// `transfers`, and the family of each element to `families`.
  caf::error encode_message(uint64_t target, uint64_t sender,
                            caf::message_id mid, const caf::message& msg,
                            std::vector<store::transfer_ticket>& tickets,
                            std::vector<uint64_t>& transfers,
                            inline_one<std::string>& families,
                            wire_message& out);

private:
  /// A value encoded for the wire: its payload header (the plan's `key`
  /// plus the frame sizes, or the whole `header` when `key` is empty),
  /// frames and family.
  struct encoded_value {
    std::span<const std::byte> key;
    std::vector<std::byte> header;
    std::vector<serializers::frame> frames;
    std::string family;
  };

  /// Empties an encoded value for its next use, keeping capacity.
  static void reset_encoded(encoded_value& x);

  /// The encoded value of one element, kept by the thread (see
  /// thread_lease.hpp).
  using encoded_lease = thread_lease<encoded_value, &encoder::reset_encoded>;

  /// Where a frame of `size` bytes goes (see the file comment).
  enum class placement { store, pull, compress, inline_plain };
  placement placement_of(uint64_t size) const;

  /// Turns the header and frames of `encoded` into `result`'s: the header
  /// and the inline frames up to `small_frame_bytes` are copied into one
  /// block, the other frames placed one by one (`place_frame`).
  caf::error place_frames(encoded_value& encoded,
                          std::vector<store::transfer_ticket>& tickets,
                          std::vector<uint64_t>& transfers,
                          wire_element& result);

  /// Encodes one element into `result` (fresh, filled in place), with the
  /// families in `only` when given, else with the link's.
  caf::error encode_element(std::type_index type, const void* value,
                            const std::shared_ptr<const void>& keep_alive,
                            const std::vector<std::string>* only,
                            std::string& family_used,
                            std::vector<store::transfer_ticket>& tickets,
                            std::vector<uint64_t>& transfers,
                            wire_element& result);

  /// Encodes `*value` with the link's families: by the type's plan when it
  /// has one (and it works for the value), else through the registry's
  /// general path (which names every family tried when none can). With
  /// `only`, the general path with those families.
  caf::error encode_value(std::type_index type, const void* value,
                          const std::shared_ptr<const void>& keep_alive,
                          const std::vector<std::string>* only,
                          encoded_value& out);

  /// Explains an encoding failure in the link's terms.
  caf::error explain(caf::error err) const;

  /// Turns one encoded frame into its wire frame (see the file comment).
  caf::error place_frame(serializers::frame&& frame,
                         std::vector<store::transfer_ticket>& tickets,
                         std::vector<uint64_t>& transfers, wire_frame& out);

  /// Returns the link's encode plan for `type` (made on first use), or null
  /// when the type has none (see registry::plan_encode) or the cache is full.
  const serializers::registry::encode_plan* plan_for(std::type_index type);

  /// Turns the tickets of handles a payload holds into `inline_handle` and
  /// `remote_handle` frames for a peer on another host: the objects stay
  /// here (as transfers) until the peer pulled them.
  caf::error export_handles(const std::vector<store::transfer_ticket>& tickets,
                            wire_element& element,
                            std::vector<uint64_t>& transfers);

  /// Checks the encoded message's sizes against the link's limits.
  caf::error check_sizes(const wire_message& out) const;

  const link_context& ctx_;
  const std::vector<std::string> send_families_;
  transfer_table& transfers_;
  family_counters& sent_by_family_;
  /// Options of every encode on this link (built once).
  serializers::encode_options opts_;

  // One plan per type sent, for the registry generation it was made in (a
  // later registration makes a new one).
  struct cached_plan {
    std::type_index type;
    uint64_t generation;
    // None: the type takes registry::encode every time (e.g. a stand-in).
    std::optional<serializers::registry::encode_plan> plan;
  };
  static constexpr size_t max_plans = 64;
  plan_cache<cached_plan, max_plans> plans_;
};

} // namespace ferry::detail
