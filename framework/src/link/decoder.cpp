// decoder: wire messages into CAF messages (see link/decoder.hpp).
#include "link/decoder.hpp"

#include "link/compression.hpp"
#include "link/thread_lease.hpp"

#include "ferry/errc.hpp"

#include "ferry/serializers/detail/error.hpp"

#include "ferry/serializers/errc.hpp"
#include "ferry/serializers/payload.hpp"
#include "ferry/store/import_scope.hpp"
#include "ferry/store/object_ref.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace ferry::detail {

using serializers::detail::list_names;

namespace {

/// Whether `err` is of `code` (whatever its context).
bool is(const caf::error& err, serializers::errc code) {
  return err == caf::make_error(code, err.context());
}

/// Empties a payload that was decoded, keeping its vectors' capacity.
void reset_payload(serializers::payload& p) {
  p.frames.clear();
  p.header.frame_sizes.clear();
  p.header.family.clear();
  p.header.type_name.clear();
  p.header.stand_in.clear();
  p.header.version = 1;
}

/// The payload one element is decoded into, kept by the thread (two
/// allocations per message less).
using payload_lease = thread_lease<serializers::payload, &reset_payload>;

/// Returns a predicate for plans of headers with `key` made in `generation`.
auto plan_for_key(std::span<const std::byte> key, uint64_t generation) {
  return [key, generation](const auto& x) {
    return x.generation == generation && x.key.size() == key.size() &&
           std::memcmp(x.key.data(), key.data(), key.size()) == 0;
  };
}

} // namespace

decoder::decoder(const link_context& ctx, family_counters& received_by_family)
  : ctx_(ctx),
    received_by_family_(received_by_family) {
  opts_.deserializers = ctx_.cfg.deserializers;
  opts_.context = serializers::context{ctx_.peer_name, ctx_.node_name,
                                       ctx_.peer_name, ctx_.same_host};
  opts_.limits.max_payload_bytes = ctx_.cfg.max_message_size;
  opts_.writer_shapes = ctx_.types.writer_shapes();
}

caf::expected<caf::message> decoder::decode_message(wire_message& msg) {
  if (msg.error)
    return caf::make_message(std::move(msg.error));
  if (auto err = import_inline_handles(msg))
    return err;
  // Handles of the peer's store resolve to the local copies. From another
  // host nothing else resolves: a handle naming this host's store would
  // give the peer an object it was never sent (ids are easy to guess).
  std::optional<store::import_scope> scope;
  if (!ctx_.same_host || !msg.imports.empty()) {
    scope.emplace(ctx_.peer_store_token,
                  ctx_.same_host ? store::import_scope::others::resolve
                                 : store::import_scope::others::refuse);
    for (auto& [id, ref] : msg.imports)
      scope->add(store::object_id{id}, ref);
  }
  caf::message content;
  for (auto& element : msg.elements) {
    auto decoded = decode_element(element);
    if (!decoded)
      return std::move(decoded.error());
    content = content.empty() ? std::move(*decoded)
                              : caf::message::concat(content, *decoded);
  }
  return content;
}

caf::error decoder::import_inline_handles(wire_message& msg) {
  for (auto& element : msg.elements)
    for (auto& frame : element.frames) {
      auto kind = static_cast<frame_kind>(frame.kind);
      auto imported = [&] {
        return std::any_of(msg.imports.begin(), msg.imports.end(),
                           [&](auto& x) { return x.first == frame.object_id; });
      };
      if (kind == frame_kind::remote_object ||
          (kind == frame_kind::remote_handle && !imported()))
        return caf::make_error(
          errc::transfer_failed,
          "node " + ctx_.peer_name + " sent " + std::to_string(frame.size) +
            " bytes to pull (a large frame or a store handle) in a message "
            "that is decoded without pulling (spawn arguments); pass large "
            "values and store handles to another host in a message after "
            "the spawn");
      if (kind != frame_kind::inline_handle)
        continue;
      if (imported()) {
        // Landed in this host's store while the message was read.
        ctx_.counters.bytes_inline_received += frame.size;
        continue;
      }
      // A small object behind a handle came with the message: copy it into
      // this host's store.
      if (frame.data.size() != frame.size)
        return caf::make_error(errc::decode_failed,
                               "handle frame size does not match its data");
      auto copy = create_import(frame.object_id, frame.size);
      if (!copy)
        return std::move(copy.error());
      auto bytes = frame.data.bytes();
      if (!bytes.empty())
        std::memcpy(copy->bytes().data(), bytes.data(), bytes.size());
      auto ref = copy->seal();
      if (!ref)
        return std::move(ref.error());
      ctx_.counters.bytes_inline_received += frame.size;
      msg.imports.emplace_back(frame.object_id, std::move(*ref));
    }
  return caf::none;
}

caf::expected<caf::message> decoder::decode_element(wire_element& element) {
  payload_lease lease;
  auto& input = lease.get();
  auto header_error = [&](caf::error err) {
    if (is(err, serializers::errc::payload_too_large))
      return caf::make_error(
        errc::message_too_large,
        "node " + ctx_.peer_name + " sent a message above node " +
          ctx_.node_name + "'s max-message-size of " +
          std::to_string(ctx_.cfg.max_message_size) +
          " bytes; raise max-message-size on node " + ctx_.node_name + " (" +
          serializers::render(err) + ")");
    return err;
  };
  auto bytes = element.header.bytes();
  auto key = serializers::header_key(bytes);
  // A header whose key the link accepted before is read by its frame sizes
  // alone; any other gets every check (the registry's plan_decode).
  std::optional<serializers::registry::decode_plan> own;
  auto* plan = key.empty() ? nullptr : plan_for(key);
  if (plan != nullptr) {
    if (auto err = serializers::decode_frame_sizes(
          bytes, key.size(), opts_.limits, input.header.frame_sizes))
      return header_error(std::move(err));
  } else {
    if (auto err =
          serializers::decode_header(bytes, opts_.limits, input.header))
      return header_error(std::move(err));
    // A type of another shape on the peer is decoded only from a family
    // that bridges the two versions; any other never gets a plan, so each
    // of its messages comes here and is refused.
    if (auto err =
          ctx_.types.refusal(input.header.type_name, input.header.family))
      return err;
    auto made = ctx_.registry.plan_decode(input.header, opts_);
    if (!made)
      return explain(input.header, std::move(made.error()));
    plan = keep_plan(key, std::move(*made), own);
  }
  if (auto err = gather_frames(element, input))
    return err;
  auto start = clock::steady().now();
  auto result = ctx_.registry.decode_message(*plan, std::move(input), opts_);
  if (result) {
    received_by_family_.time(plan->family(), nanos_since(start));
    received_by_family_.count(plan->family());
  }
  return result;
}

caf::error decoder::explain(const serializers::payload_header& header,
                            caf::error err) const {
  if (is(err, serializers::errc::unknown_type) &&
      !ctx_.registry.has_type(header.type_name))
    return caf::make_error(
      errc::unregistered_type,
      "node " + ctx_.node_name + " received type \"" + header.type_name +
        "\" from node " + ctx_.peer_name +
        " but has not registered it; call cfg.add_message_type<T>(\"" +
        header.type_name + "\") in this process too");
  if (is(err, serializers::errc::family_not_allowed))
    return caf::make_error(
      errc::family_refused,
      "node " + ctx_.node_name + " refuses family \"" + header.family +
        "\" for type \"" + header.type_name + "\" on the link from node " +
        ctx_.peer_name + ": its deserializers are " +
        list_names(ctx_.cfg.deserializers) +
        "; add the family to deserializers in [ferry.links." + ctx_.peer_name +
        "] or remove it from the sender's serializers");
  return err;
}

caf::error decoder::gather_frames(wire_element& element,
                                  serializers::payload& input) {
  input.frames.reserve(element.frames.size());
  for (auto& in : element.frames) {
    switch (static_cast<frame_kind>(in.kind)) {
    case frame_kind::inline_plain:
      if (in.data.size() != in.size)
        return caf::make_error(errc::decode_failed,
                               "inline frame size does not match its data");
      if (in.data.sole_owner())
        input.frames.emplace_back(serializers::frame{in.data.take()});
      else
        input.frames.emplace_back(
          serializers::frame::view(in.data.bytes(), in.data.keep_alive()));
      ctx_.counters.bytes_inline_received += in.size;
      break;
    case frame_kind::inline_lz4:
    case frame_kind::inline_zstd: {
      auto bytes = decompress(static_cast<frame_kind>(in.kind), in.data.bytes(),
                              in.size, ctx_.cfg.max_message_size);
      if (!bytes)
        return std::move(bytes.error());
      ctx_.counters.bytes_inline_received += in.data.size();
      input.frames.emplace_back(serializers::frame{std::move(*bytes)});
      break;
    }
    case frame_kind::store_object: {
      if (!ctx_.same_host)
        // A ticket is redeemable by anyone who names it: a peer of
        // another host could take another sender's object in transit.
        return caf::make_error(
          errc::transfer_failed,
          "node " + ctx_.peer_name +
            " sent a store ticket, but it does "
            "not share this host's store (another host, or another store "
            "name); such a node sends large frames to be pulled");
      if (ctx_.store == nullptr)
        return caf::make_error(
          errc::transfer_failed,
          "node " + ctx_.peer_name +
            " sent a store handle but this node "
            "has no store; enable ferry.store on both nodes of a host");
      store::transfer_ticket ticket;
      ticket.object = store::object_id{in.object_id};
      ticket.id = in.ticket;
      auto ref = ctx_.store->redeem(ticket);
      if (!ref)
        return std::move(ref.error());
      if (ref->size() != in.size)
        return caf::make_error(errc::transfer_failed,
                               "store object size does not match the frame");
      auto holder = std::make_shared<store::object_ref>(std::move(*ref));
      auto bytes = holder->bytes();
      input.frames.emplace_back(
        serializers::frame::view(bytes, std::move(holder)));
      ctx_.counters.bytes_spilled_received += in.size;
      break;
    }
    case frame_kind::remote_handle:
    case frame_kind::inline_handle:
      // Not payload frames: decode_message imported their objects.
      break;
    default:
      return caf::make_error(errc::decode_failed,
                             "unknown frame kind " +
                               std::to_string(static_cast<int>(in.kind)));
    }
  }
  return caf::none;
}

const serializers::registry::decode_plan*
decoder::plan_for(std::span<const std::byte> key) const {
  auto* found = plans_.find(plan_for_key(key, ctx_.registry.generation()));
  return found != nullptr ? &found->plan : nullptr;
}

const serializers::registry::decode_plan*
decoder::keep_plan(std::span<const std::byte> key,
                   serializers::registry::decode_plan plan,
                   std::optional<serializers::registry::decode_plan>& own) {
  auto generation = plan.generation();
  // A copy of the plan goes in: if the cache fills meanwhile, it is needed
  // here.
  if (!plans_.full())
    if (auto* kept =
          plans_.add(cached_plan{{key.begin(), key.end()}, generation, plan},
                     plan_for_key(key, generation)))
      return &kept->plan;
  own = std::move(plan);
  return &*own;
}

caf::expected<store::object_builder> decoder::create_import(uint64_t object_id,
                                                            uint64_t size) {
  auto copy = ctx_.store != nullptr
                ? ctx_.store->create(size)
                : caf::expected<store::object_builder>{caf::make_error(
                    errc::transfer_failed,
                    "this node has no store; enable ferry.store to receive "
                    "store handles")};
  if (!copy)
    return caf::make_error(
      errc::transfer_failed,
      "cannot copy object " + std::to_string(object_id) + " (" +
        std::to_string(size) + " bytes) that node " + ctx_.peer_name +
        " sent a handle to into this node's store: " + render(copy.error()));
  return copy;
}

} // namespace ferry::detail
