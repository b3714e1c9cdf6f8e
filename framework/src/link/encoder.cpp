// encoder: CAF messages into wire messages (see link/encoder.hpp).
#include "link/encoder.hpp"

#include "link/compression.hpp"
#include "wire/relay_hint.hpp"

#include "ferry/errc.hpp"

#include "ferry/serializers/detail/buffer_pool.hpp"
#include "ferry/serializers/detail/error.hpp"

#include "ferry/serializers/errc.hpp"
#include "ferry/serializers/payload.hpp"
#include "ferry/store/in_band_scope.hpp"
#include "ferry/store/object_ref.hpp"

#include <algorithm>
#include <chrono>

namespace ferry::detail {

using serializers::detail::demangle_name;
using serializers::detail::list_names;

namespace {

/// Inline frames up to this size are copied, with the payload header, into
/// one block per element (see encoder.hpp).
constexpr uint64_t small_frame_bytes = 8 * 1024;

/// The message an encode keeps alive for view frames (`raw`, large arrays),
/// in a shared block the calling thread reuses while no frame holds it:
/// most messages leave no view behind, and then the next one needs no new
/// block (one allocation per message less). On release the block lets go
/// of the message at once when no frame holds it.
class keep_alive_lease {
public:
  explicit keep_alive_lease(const caf::message& msg) {
    auto& spare = kept();
    if (spare && spare.use_count() == 1) {
      *spare = msg;
      ptr_ = spare;
    } else {
      ptr_ = std::make_shared<caf::message>(msg);
      spare = ptr_;
    }
  }

  keep_alive_lease(const keep_alive_lease&) = delete;
  keep_alive_lease& operator=(const keep_alive_lease&) = delete;

  ~keep_alive_lease() {
    auto& spare = kept();
    if (spare != ptr_)
      return; // a nested encode on this thread took the spare over
    ptr_.reset();
    // Only this thread holds it: nobody can take a new reference now.
    if (spare.use_count() == 1)
      *spare = caf::message{};
    else
      spare.reset(); // a frame holds it: the next message gets a new block
  }

  const std::shared_ptr<caf::message>& get() const noexcept { return ptr_; }

private:
  static std::shared_ptr<caf::message>& kept() noexcept {
    thread_local std::shared_ptr<caf::message> spare;
    return spare;
  }

  std::shared_ptr<caf::message> ptr_;
};

std::string describe_element(const caf::message& msg, size_t pos) {
  auto rtti = msg.type(pos);
  if (rtti.second != nullptr)
    return demangle_name(rtti.second->name());
  return "CAF built-in type #" + std::to_string(rtti.first);
}

/// Whether `err` is of `code` (whatever its context).
bool is(const caf::error& err, serializers::errc code) {
  return err == caf::make_error(code, err.context());
}

} // namespace

encoder::encoder(const link_context& ctx,
                 std::vector<std::string> send_families,
                 transfer_table& transfers, family_counters& sent_by_family)
  : ctx_(ctx),
    send_families_(std::move(send_families)),
    transfers_(transfers),
    sent_by_family_(sent_by_family) {
  opts_.serializers = send_families_;
  opts_.context = serializers::context{ctx_.node_name, ctx_.peer_name,
                                       ctx_.peer_name, ctx_.same_host};
  opts_.limits.max_payload_bytes = ctx_.cfg.max_message_size;
}

caf::error encoder::encode_message(uint64_t target, uint64_t sender,
                                   caf::message_id mid, const caf::message& msg,
                                   std::vector<store::transfer_ticket>& tickets,
                                   std::vector<uint64_t>& transfers,
                                   inline_one<std::string>& families,
                                   wire_message& out) {
  out.target = target;
  out.mid = mid.integer_value();
  out.sender = sender;
  keep_alive_lease lease{msg};
  std::shared_ptr<const void> keep_alive = lease.get();
  for (size_t pos = 0; pos < msg.size(); ++pos) {
    if (msg.match_element<caf::error>(pos)) {
      out.error = msg.get_as<caf::error>(pos);
      continue;
    }
    auto type = ctx_.registry.element_type(msg, pos);
    if (!type)
      return caf::make_error(
        errc::unregistered_type,
        "cannot send element " + std::to_string(pos) + " of type " +
          describe_element(msg, pos) + " to node " + ctx_.peer_name +
          ": the type is not registered; call "
          "cfg.add_message_type<T>(\"name\") in both processes");
    // A type of another shape on the peer goes only with the families that
    // bridge the two versions, or not at all.
    std::optional<std::vector<std::string>> bridging;
    if (!ctx_.types.empty())
      if (auto name = ctx_.registry.type_name(*type);
          name && ctx_.types.differs(*name)) {
        auto only = ctx_.types.send_families(*name, send_families_);
        if (!only)
          return std::move(only.error());
        bridging = std::move(*only);
      }
    auto& family = families.emplace_back();
    auto& element = out.elements.emplace_back();
    if (auto err = encode_element(*type, msg.at(pos), keep_alive,
                                  bridging ? &*bridging : nullptr, family,
                                  tickets, transfers, element))
      return err;
  }
  return check_sizes(out);
}

caf::error encoder::check_sizes(const wire_message& out) const {
  // Payload bytes against max-message-size (what the encoder and the
  // puller check, not the wire's own headers).
  uint64_t size = 0;
  for (auto& element : out.elements)
    for (auto& frame : element.frames)
      size += frame.size;
  if (size > ctx_.cfg.max_message_size)
    return caf::make_error(
      errc::message_too_large,
      "message to node " + ctx_.peer_name + " needs " + std::to_string(size) +
        " bytes in all frames, above the link's max-message-size of " +
        std::to_string(ctx_.cfg.max_message_size) +
        "; raise max-message-size on both nodes or send less");
  return caf::none;
}

caf::error encoder::encode_element(
  std::type_index type, const void* value,
  const std::shared_ptr<const void>& keep_alive,
  const std::vector<std::string>* only, std::string& family_used,
  std::vector<store::transfer_ticket>& tickets,
  std::vector<uint64_t>& transfers, wire_element& result) {
  // Tickets of handles inside the value (the store's in-band hook).
  std::vector<store::transfer_ticket> handles;
  encoded_lease lease;
  auto& encoded = lease.get();
  auto start = clock::steady().now();
  auto err = [&] {
    if (ctx_.store != nullptr) {
      store::in_band_scope scope{*ctx_.store};
      auto result = encode_value(type, value, keep_alive, only, encoded);
      handles = scope.take_tickets();
      return result;
    }
    return encode_value(type, value, keep_alive, only, encoded);
  }();
  if (err) {
    for (auto& ticket : handles)
      static_cast<void>(ctx_.store->cancel(ticket));
    return explain(std::move(err));
  }
  family_used = encoded.family;
  sent_by_family_.time(family_used, nanos_since(start));
  if (ctx_.same_host) {
    tickets.insert(tickets.end(), handles.begin(), handles.end());
  } else if (!handles.empty()) {
    // Handle frames come first; decoding skips them wherever they are.
    if (auto err = export_handles(handles, result, transfers))
      return err;
  }
  return place_frames(encoded, tickets, transfers, result);
}

caf::error encoder::place_frames(encoded_value& encoded,
                                 std::vector<store::transfer_ticket>& tickets,
                                 std::vector<uint64_t>& transfers,
                                 wire_element& result) {
  auto& frames = encoded.frames;
  auto copied = [this](const serializers::frame& frame) {
    return frame.size() <= small_frame_bytes &&
           placement_of(frame.size()) == placement::inline_plain;
  };
  auto header_bytes =
    encoded.key.empty()
      ? encoded.header.size()
      : serializers::header_size(encoded.key.size(), frames.size());
  auto block_bytes = header_bytes;
  for (auto& frame : frames)
    if (copied(frame))
      block_bytes += frame.size();
  std::shared_ptr<std::byte[]> block =
    std::make_shared_for_overwrite<std::byte[]>(block_bytes);
  std::shared_ptr<const void> keep{block};
  auto* pos = block.get();
  if (encoded.key.empty())
    std::memcpy(pos, encoded.header.data(), header_bytes);
  else
    serializers::write_header(encoded.key, frames, pos);
  result.header = wire_bytes{{pos, header_bytes}, keep};
  pos += header_bytes;
  result.frames.reserve(result.frames.size() + frames.size());
  for (auto& frame : frames) {
    auto& out = result.frames.emplace_back();
    if (!copied(frame)) {
      if (auto err = place_frame(std::move(frame), tickets, transfers, out))
        return err;
      continue;
    }
    auto n = frame.size();
    if (n != 0)
      std::memcpy(pos, frame.bytes().data(), n);
    out.kind = static_cast<uint8_t>(frame_kind::inline_plain);
    out.size = n;
    out.data = wire_bytes{{pos, n}, keep};
    ctx_.counters.bytes_inline_sent += n;
    pos += n;
    // The bytes are in the block: the encode buffer serves the next encode.
    if (frame.owned())
      serializers::detail::recycle_buffer(frame.release());
  }
  return caf::none;
}

void encoder::reset_encoded(encoded_value& x) {
  x.key = {};
  x.header.clear();
  x.frames.clear();
  x.family.clear();
}

encoder::placement encoder::placement_of(uint64_t size) const {
  auto& cfg = ctx_.cfg;
  if (size == 0)
    return placement::inline_plain;
  if (ctx_.same_host && ctx_.store != nullptr && size >= cfg.spill_threshold)
    return placement::store;
  if (!ctx_.same_host && size >= cfg.pull_threshold)
    return placement::pull;
  if (cfg.compression != compression::none && size >= cfg.compression_threshold)
    return placement::compress;
  return placement::inline_plain;
}

caf::error encoder::explain(caf::error err) const {
  if (is(err, serializers::errc::payload_too_large))
    return caf::make_error(
      errc::message_too_large,
      "message to node " + ctx_.peer_name +
        " is above the link's max-message-size of " +
        std::to_string(ctx_.cfg.max_message_size) +
        " bytes; raise max-message-size on both nodes or send less (" +
        serializers::render(err) + ")");
  if (is(err, serializers::errc::no_family_can_encode) &&
      send_families_ != ctx_.cfg.serializers)
    return caf::make_error(
      serializers::errc::no_family_can_encode,
      "on the link to node " + ctx_.peer_name + ", serializers " +
        list_names(ctx_.cfg.serializers) + " narrowed to " +
        list_names(send_families_) + " because node " + ctx_.peer_name +
        " does not accept the others: " + serializers::render(err));
  return err;
}

caf::error encoder::place_frame(serializers::frame&& frame,
                                std::vector<store::transfer_ticket>& tickets,
                                std::vector<uint64_t>& transfers,
                                wire_frame& out) {
  auto& cfg = ctx_.cfg;
  out.size = frame.size();
  switch (placement_of(out.size)) {
  case placement::store: {
    auto ref = ctx_.store->put(frame.bytes());
    if (!ref)
      return std::move(ref.error());
    auto ticket = ref->export_in_band();
    if (!ticket)
      return std::move(ticket.error());
    tickets.push_back(*ticket);
    out.kind = static_cast<uint8_t>(frame_kind::store_object);
    out.object_id = static_cast<uint64_t>(ticket->object);
    out.ticket = ticket->id;
    ctx_.counters.bytes_spilled_sent += out.size;
    break;
  }
  case placement::pull: {
    // Stays here until the peer pulled it (or the link dies).
    auto id =
      transfers_.add(std::make_shared<serializers::frame>(std::move(frame)));
    transfers.push_back(id);
    out.kind = static_cast<uint8_t>(frame_kind::remote_object);
    out.ticket = id;
    break;
  }
  case placement::compress: {
    auto packed = compress(cfg.compression, frame.bytes());
    if (!packed)
      return std::move(packed.error());
    out.kind = static_cast<uint8_t>(cfg.compression == compression::lz4
                                      ? frame_kind::inline_lz4
                                      : frame_kind::inline_zstd);
    out.data = wire_bytes{std::move(*packed)};
    ctx_.counters.bytes_inline_sent += out.data.size();
    break;
  }
  case placement::inline_plain: {
    out.kind = static_cast<uint8_t>(frame_kind::inline_plain);
    auto holder = std::make_shared<serializers::frame>(std::move(frame));
    auto bytes = holder->bytes();
    out.data = wire_bytes{bytes, std::move(holder)};
    ctx_.counters.bytes_inline_sent += out.size;
    break;
  }
  }
  return caf::none;
}

caf::error encoder::encode_value(std::type_index type, const void* value,
                                 const std::shared_ptr<const void>& keep_alive,
                                 const std::vector<std::string>* only,
                                 encoded_value& out) {
  auto& reg = ctx_.registry;
  // Only the families given, when given (a type whose shape differs on the
  // peer): no plan, the general path.
  std::optional<serializers::encode_options> narrowed;
  if (only != nullptr) {
    narrowed = opts_;
    narrowed->serializers = *only;
  } else if (auto* plan = plan_for(type)) {
    if (!reg.encode(*plan, value, opts_, keep_alive, out.frames)) {
      out.key = plan->header_key();
      out.family = plan->family();
      return caf::none;
    }
    // The family refused this value: the general path tries the next one,
    // or names every family tried.
  }
  auto encoded =
    reg.encode(type, value, narrowed ? *narrowed : opts_, keep_alive);
  if (!encoded)
    return std::move(encoded.error());
  out.key = {};
  out.header = serializers::encode_header(encoded->header);
  out.frames = std::move(encoded->frames);
  out.family = std::move(encoded->header.family);
  return caf::none;
}

const serializers::registry::encode_plan*
encoder::plan_for(std::type_index type) {
  auto& reg = ctx_.registry;
  auto generation = reg.generation();
  auto same = [&](const cached_plan& x) {
    return x.type == type && x.generation == generation;
  };
  auto* found = plans_.find(same);
  // Once the cache is full, types without a plan take the general path
  // without planning again for every message.
  if (found == nullptr && !plans_.full())
    found = plans_.add(
      cached_plan{type, generation, reg.plan_encode(type, opts_)}, same);
  return found != nullptr && found->plan ? &*found->plan : nullptr;
}

namespace {

/// A store object held for a peer to pull, with its lease on the object's
/// relay entry.
struct relayed_object {
  store::object_ref ref;
  std::shared_ptr<const void> lease;
};

} // namespace

caf::error
encoder::export_handles(const std::vector<store::transfer_ticket>& tickets,
                        wire_element& element,
                        std::vector<uint64_t>& transfers) {
  auto* store = ctx_.store;
  // Take every reference over first, so a failure leaves no ticket behind.
  std::vector<store::object_ref> refs;
  caf::error failure;
  for (auto& ticket : tickets) {
    auto ref = store->redeem(ticket);
    if (ref)
      refs.emplace_back(std::move(*ref));
    else if (!failure)
      failure = std::move(ref.error());
  }
  if (failure)
    return failure;
  for (auto& ref : refs) {
    auto id = static_cast<uint64_t>(ref.id());
    auto known =
      std::find_if(element.frames.begin(), element.frames.end(),
                   [id](const wire_frame& x) { return x.object_id == id; });
    if (known != element.frames.end())
      continue; // the same object twice: one copy serves both handles
    wire_frame out;
    out.size = ref.size();
    out.object_id = id;
    auto bytes = ref.bytes();
    if (out.size < ctx_.cfg.pull_threshold) {
      // Small: the bytes go with the message (no round trip to pull them).
      out.kind = static_cast<uint8_t>(frame_kind::inline_handle);
      out.data =
        wire_bytes{bytes, std::make_shared<store::object_ref>(std::move(ref))};
      ctx_.counters.bytes_inline_sent += out.size;
    } else {
      // Large: the peer pulls it. The frame's data tells it the object's
      // relay key and the node the object went to before, which it may
      // pull from instead (transfer/relay_directory.hpp); the transfer holds
      // the object and its directory entry.
      out.kind = static_cast<uint8_t>(frame_kind::remote_handle);
      auto offer = ctx_.host.offer_relay(id, ctx_.peer_name);
      out.data = wire_bytes{encode_relay_hint(offer.hint)};
      auto held = std::make_shared<relayed_object>(
        relayed_object{std::move(ref), std::move(offer.lease)});
      out.ticket = transfers_.add(std::make_shared<serializers::frame>(
        serializers::frame::view(bytes, std::move(held))));
      transfers.push_back(out.ticket);
    }
    element.frames.emplace_back(std::move(out));
  }
  return caf::none;
}

} // namespace ferry::detail
