// decoder: turns a wire_message from the peer back into a CAF message.
//
// For each element the decoder reads the payload header (every check the
// first time a header key is seen on the link: registered type, family in
// the link's allowlist, limits; afterwards the cached plan and the frame
// sizes alone), gathers the frames wherever they travelled (inline,
// compressed, in the store by ticket, already pulled) and decodes them with
// the registry into an ordinary typed message.
//
// Store handles inside a value resolve through an import scope: from
// another host only to the copies the message carried (`inline_handle`
// frames, copied into this host's store here unless the reader landed them
// there already, and `remote_handle` frames the puller fetched); a handle
// naming this host's store is refused, as object ids are easy to guess.
//
// Errors name what failed and how to fix it (unregistered type, refused
// family, sizes, store); nothing a peer sends makes the decoder throw or
// allocate beyond the link's max-message-size.
//
// Thread-safety: every member function may be called from any thread at
// once; the plan cache is lock-free.
#pragma once

#include "link/link_context.hpp"
#include "link/link_counters.hpp"
#include "link/plan_cache.hpp"
#include "wire/message.hpp"

#include "ferry/serializers/registry.hpp"
#include "ferry/store/object_builder.hpp"

#include <caf/expected.hpp>
#include <caf/message.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace ferry::detail {

class decoder {
public:
  /// Counts each decoded element's family in `received_by_family`.
  decoder(const link_context& ctx, family_counters& received_by_family);

  /// Decodes every element of `msg` (allowlist, limits, store frames).
  caf::expected<caf::message> decode_message(wire_message& msg);

  /// Creates the local copy of object `object_id` (`size` bytes) of the
  /// peer's store, which a message holds a handle to; the error says why it
  /// cannot (no store, store full).
  caf::expected<store::object_builder> create_import(uint64_t object_id,
                                                     uint64_t size);

private:
  /// Copies the `inline_handle` frames of `msg` that did not land in the
  /// store while it was read into this host's store.
  caf::error import_inline_handles(wire_message& msg);

  caf::expected<caf::message> decode_element(wire_element& element);

  /// Reads the frames of `element` into `input`.
  caf::error gather_frames(wire_element& element, serializers::payload& input);

  /// Returns the decode plan for payload headers with `key` that the link
  /// accepted before, or null.
  const serializers::registry::decode_plan*
  plan_for(std::span<const std::byte> key) const;

  /// Keeps `plan` for later headers with `key` when the cache has room and
  /// returns it there; else moves it into `own` and returns that.
  const serializers::registry::decode_plan*
  keep_plan(std::span<const std::byte> key,
            serializers::registry::decode_plan plan,
            std::optional<serializers::registry::decode_plan>& own);

  /// Explains why the registry refused a payload header, in the link's
  /// terms.
  caf::error explain(const serializers::payload_header& header,
                     caf::error err) const;

  const link_context& ctx_;
  family_counters& received_by_family_;
  /// Options of every decode on this link (built once).
  serializers::decode_options opts_;

  // One plan per payload header key accepted, for the registry generation
  // it was made in (a later registration makes a new one).
  struct cached_plan {
    std::vector<std::byte> key;
    uint64_t generation;
    serializers::registry::decode_plan plan;
  };
  static constexpr size_t max_plans = 64;
  plan_cache<cached_plan, max_plans> plans_;
};

} // namespace ferry::detail
