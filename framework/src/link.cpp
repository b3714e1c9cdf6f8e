// link_state: encoding, spilling, credit and delivery for one link.
//
// Invariants:
// - Every wire_message a node sends takes credit for `wire_size(msg)` bytes
//   and one message; the receiving node returns exactly that credit once the
//   target actor has processed (or the node refused) the message. Frames
//   count at their full size whether they travel inline, compressed, in the
//   store or by pull: the receiver holds them all the same. Senders of
//   requests and one-way messages wait for credit; responses never wait (they
//   are bounded by the requests outstanding), so two saturated nodes cannot
//   deadlock on each other's windows.
// - View frames point into the sender's message; the wire message holds a
//   reference to that message until CAF has serialized it.
// - A ticket exported for a store frame or an in-band handle is either
//   redeemed by the receiver or cancelled (receiver refusal, send failure).
#include "detail/node_impl.hpp"

#include "ferry/errc.hpp"

#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/errc.hpp"
#include "ferry/serializers/payload.hpp"
#include "ferry/store/import_scope.hpp"
#include "ferry/store/in_band_scope.hpp"
#include "ferry/store/object_ref.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/make_actor.hpp>
#include <caf/message_builder.hpp>
#include <caf/send.hpp>

#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <cxxabi.h>
#include <limits>
#include <utility>

namespace ferry::detail {

namespace {

/// Whether this thread is inside link_state::deliver (see send).
thread_local bool delivering = false;

/// CAF's BASP keeps payload lengths in 32 bits without a check; stay well
/// below that so the header and framing always fit.
constexpr uint64_t basp_payload_limit = (uint64_t{1} << 32) - (uint64_t{1} << 20);

/// Fixed per-message overhead counted against the credit window.
constexpr uint64_t wire_overhead = 64;

/// Peer actors remembered as down without a proxy (see link_state::proxy).
constexpr size_t max_recently_down = 1024;

std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> result{
    abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free};
  return status == 0 && result ? std::string{result.get()} : std::string{name};
}

std::string describe_element(const caf::message& msg, size_t pos) {
  auto rtti = msg.type(pos);
  if (rtti.second != nullptr)
    return demangle(rtti.second->name());
  return "CAF built-in type #" + std::to_string(rtti.first);
}

caf::expected<std::vector<std::byte>> compress(compression codec,
                                                std::span<const std::byte> in) {
  std::vector<std::byte> out;
  if (codec == compression::lz4) {
    if (in.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE))
      return caf::make_error(errc::message_too_large,
                             "a frame of " + std::to_string(in.size())
                               + " bytes is above lz4's limit of "
                               + std::to_string(LZ4_MAX_INPUT_SIZE)
                               + "; use compression \"zstd\" or a lower "
                                 "pull-threshold or spill-threshold");
    out.resize(static_cast<size_t>(LZ4_compressBound(static_cast<int>(in.size()))));
    auto n = LZ4_compress_default(reinterpret_cast<const char*>(in.data()),
                                  reinterpret_cast<char*>(out.data()),
                                  static_cast<int>(in.size()),
                                  static_cast<int>(out.size()));
    if (n <= 0)
      return caf::make_error(errc::message_too_large, "lz4 compression failed");
    out.resize(static_cast<size_t>(n));
  } else {
    out.resize(ZSTD_compressBound(in.size()));
    auto n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 1);
    if (ZSTD_isError(n))
      return caf::make_error(errc::message_too_large,
                             std::string{"zstd compression failed: "}
                               + ZSTD_getErrorName(n));
    out.resize(n);
  }
  return out;
}

caf::expected<std::vector<std::byte>>
decompress(frame_kind kind, std::span<const std::byte> in, uint64_t size,
           uint64_t limit) {
  if (size > limit)
    return caf::make_error(errc::message_too_large,
                           "compressed frame claims " + std::to_string(size)
                             + " bytes, above the link's max-message-size of "
                             + std::to_string(limit));
  // Everything a peer claims is checked before the buffer is allocated: no
  // codec turns a few bytes into more than its best ratio allows (lz4: 255
  // to 1; zstd: a 128 KiB block from a 4-byte RLE block), and a zstd frame
  // states its own size.
  auto refuse = [&](const char* codec, const std::string& why) {
    return caf::make_error(errc::decode_failed,
                           std::string{codec} + " frame of "
                             + std::to_string(in.size())
                             + " bytes cannot decompress to its declared "
                             + std::to_string(size) + " bytes: " + why);
  };
  if (kind == frame_kind::inline_lz4) {
    if (size > static_cast<uint64_t>(std::numeric_limits<int>::max())
        || in.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
      return refuse("lz4", "above lz4's 2 GiB limit");
    if (size > uint64_t{255} * in.size() + 255)
      return refuse("lz4", "more than lz4's largest ratio (255:1)");
  } else {
    constexpr uint64_t zstd_block = 128 * 1024;
    auto declared = ZSTD_getFrameContentSize(in.data(), in.size());
    if (declared != size)
      return refuse("zstd", "the frame's header says otherwise");
    if (size / zstd_block > in.size() / 4 + 1)
      return refuse("zstd", "more than zstd's largest ratio");
  }
  std::vector<std::byte> out(size);
  if (kind == frame_kind::inline_lz4) {
    auto n = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data()),
                                 reinterpret_cast<char*>(out.data()),
                                 static_cast<int>(in.size()),
                                 static_cast<int>(size));
    if (n < 0 || static_cast<uint64_t>(n) != size)
      return caf::make_error(errc::decode_failed,
                             "lz4 frame does not decompress to its declared "
                             "size of " + std::to_string(size) + " bytes");
  } else {
    auto n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n) || n != size)
      return caf::make_error(errc::decode_failed,
                             "zstd frame does not decompress to its declared "
                             "size of " + std::to_string(size) + " bytes");
  }
  return out;
}

} // namespace

std::string join(const std::vector<std::string>& xs) {
  std::string result = "[";
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i > 0)
      result += ", ";
    result += xs[i];
  }
  return result + "]";
}

uint64_t request_key(caf::message_id mid) {
  return mid.integer_value() & caf::message_id::request_id_mask;
}

uint64_t frame_bytes(const wire_frame& frame) {
  // `size` is what the frame decodes to; inline frames are checked against
  // it on receipt, compressed ones on decompression, store and pulled ones
  // when the object or transfer is redeemed.
  auto kind = static_cast<frame_kind>(frame.kind);
  return kind == frame_kind::inline_plain || kind == frame_kind::inline_handle
           ? frame.data.size()
           : frame.size;
}

uint64_t wire_size(const wire_message& msg) {
  // Saturates: a peer's claimed sizes must not wrap around to a small figure.
  auto add = [](uint64_t x, uint64_t y) {
    return x > std::numeric_limits<uint64_t>::max() - y
             ? std::numeric_limits<uint64_t>::max()
             : x + y;
  };
  uint64_t result = wire_overhead;
  for (auto& element : msg.elements) {
    result = add(result, element.header.size());
    for (auto& frame : element.frames)
      result = add(result, add(frame_bytes(frame), 32));
  }
  return result;
}

// -- credit_token and credited_element ----------------------------------------

std::optional<std::string> log_limiter::pass(const std::string& line) {
  auto now = std::chrono::steady_clock::now();
  uint64_t left_out = 0;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (last_ && now - *last_ < interval_) {
      ++left_out_;
      return std::nullopt;
    }
    last_ = now;
    left_out = std::exchange(left_out_, 0);
  }
  if (left_out == 0)
    return line;
  return line + " (and " + std::to_string(left_out)
         + " more like it since the last line)";
}

void credit_token::release() {
  if (bytes_ > 0)
    if (auto link = link_.lock())
      link->return_credit(std::exchange(bytes_, 0), held_);
}

credited_element::credited_element(caf::strong_actor_ptr sender,
                                   caf::message_id mid, caf::message content,
                                   credit_token token)
  : caf::mailbox_element(std::move(sender), mid, {}),
    msg_(std::move(content)),
    token_(std::move(token)) {
  // nop
}

caf::type_erased_tuple& credited_element::content() {
  if (msg_.empty())
    return empty_;
  return msg_.content();
}

const caf::type_erased_tuple& credited_element::content() const {
  if (msg_.empty())
    return empty_;
  return msg_.content();
}

caf::message credited_element::move_content_to_message() {
  return std::move(msg_);
}

caf::message credited_element::copy_content_to_message() const {
  return msg_;
}

// -- link_state: construction -------------------------------------------------

link_state::link_state(node_impl& node, const hello& peer, link_config cfg,
                       std::vector<std::string> send_families, bool same_host,
                       uint64_t inbound_token)
  : node_(node),
    peer_name_(peer.node_name),
    peer_node_(peer.gateway.node()),
    peer_gateway_(peer.gateway),
    cfg_(std::move(cfg)),
    send_families_(std::move(send_families)),
    same_host_(same_host),
    inbound_token_(inbound_token),
    outbound_token_(peer.link_token),
    peer_store_token_(peer.store_token),
    peer_window_bytes_(peer.window_bytes),
    peer_window_messages_(peer.window_messages),
    byte_batch_(
      std::max<uint64_t>(1, std::min(cfg_.window_bytes, peer_window_bytes_) / 4)),
    message_batch_(std::max<uint64_t>(
      1, std::min(cfg_.window_messages, peer_window_messages_) / 4)),
    default_actor_(peer.default_actor),
    sent_by_family_(send_families_),
    received_by_family_(cfg_.deserializers) {
  // Built once: every message of the link encodes and decodes with these.
  enc_opts_.serializers = send_families_;
  enc_opts_.context = serializers::context{node_.config().node_name,
                                           peer_name_, peer_name_, same_host_};
  enc_opts_.limits.max_payload_bytes = cfg_.max_message_size;
  dec_opts_.deserializers = cfg_.deserializers;
  dec_opts_.context = serializers::context{peer_name_, node_.config().node_name,
                                           peer_name_, same_host_};
  dec_opts_.limits.max_payload_bytes = cfg_.max_message_size;
  if (peer_window_bytes_ > cfg_.max_held_bytes
      || peer_window_messages_ > cfg_.max_held_messages)
    node_.log("node " + peer_name_ + " sends with a credit window of "
              + std::to_string(peer_window_messages_) + " messages and "
              + std::to_string(peer_window_bytes_)
              + " bytes, above what this node holds of a peer's ("
              + std::to_string(cfg_.max_held_messages) + " messages, "
              + std::to_string(cfg_.max_held_bytes)
              + " bytes): when this node's actors fall behind, its messages "
                "beyond that are refused (receiver_full); raise "
                "ferry.link.max-held-messages / max-held-bytes here or "
                "lower window-messages / window-bytes there");
}

link_state::~link_state() = default;

// -- link_state: sending ------------------------------------------------------

caf::error
link_state::encode_element(std::type_index type, const void* value,
                           const std::shared_ptr<const void>& keep_alive,
                           std::string& family_used,
                           std::vector<store::transfer_ticket>& tickets,
                           std::vector<uint64_t>& transfers,
                           wire_element& result) {
  // Tickets of handles inside the value (the store's in-band hook).
  std::vector<store::transfer_ticket> handles;
  auto encoded = [&] {
    if (auto* store = node_.store()) {
      store::in_band_scope scope{*store};
      auto result = encode_value(type, value, keep_alive);
      handles = scope.take_tickets();
      return result;
    }
    return encode_value(type, value, keep_alive);
  }();
  if (!encoded) {
    for (auto& ticket : handles)
      static_cast<void>(node_.store()->cancel(ticket));
    if (encoded.error()
        == caf::make_error(serializers::errc::payload_too_large,
                           encoded.error().context()))
      return caf::make_error(
        errc::message_too_large,
        "message to node " + peer_name_
          + " is above the link's max-message-size of "
          + std::to_string(cfg_.max_message_size)
          + " bytes; raise max-message-size on both nodes or send less ("
          + serializers::render(encoded.error()) + ")");
    if (encoded.error()
          == caf::make_error(serializers::errc::no_family_can_encode,
                             encoded.error().context())
        && send_families_ != cfg_.serializers)
      return caf::make_error(
        serializers::errc::no_family_can_encode,
        "on the link to node " + peer_name_ + ", serializers "
          + join(cfg_.serializers) + " narrowed to " + join(send_families_)
          + " because node " + peer_name_
          + " does not accept the others: "
          + serializers::render(encoded.error()));
    return std::move(encoded.error());
  }
  family_used = std::move(encoded->family);
  if (same_host_) {
    tickets.insert(tickets.end(), handles.begin(), handles.end());
  } else if (!handles.empty()) {
    // Handle frames come first; decoding skips them wherever they are.
    if (auto err = export_handles(handles, result, transfers))
      return err;
  }
  result.header = wire_bytes{std::move(encoded->header)};
  result.frames.reserve(encoded->frames.size());
  for (auto& frame : encoded->frames) {
    wire_frame out;
    out.size = frame.size();
    auto* store = node_.store();
    if (same_host_ && store != nullptr && out.size > 0
        && out.size >= cfg_.spill_threshold) {
      auto ref = store->put(frame.bytes());
      if (!ref)
        return std::move(ref.error());
      auto ticket = ref->export_in_band();
      if (!ticket)
        return std::move(ticket.error());
      tickets.push_back(*ticket);
      out.kind = static_cast<uint8_t>(frame_kind::store_object);
      out.object_id = static_cast<uint64_t>(ticket->object);
      out.ticket = ticket->id;
      counters_.bytes_spilled_sent += out.size;
    } else if (!same_host_ && out.size > 0 && out.size >= cfg_.pull_threshold) {
      // Stays here until the peer pulled it (or the link dies).
      auto id = add_transfer(
        std::make_shared<serializers::frame>(std::move(frame)));
      transfers.push_back(id);
      out.kind = static_cast<uint8_t>(frame_kind::remote_object);
      out.ticket = id;
    } else if (cfg_.compression != compression::none && out.size > 0
               && out.size >= cfg_.compression_threshold) {
      auto packed = compress(cfg_.compression, frame.bytes());
      if (!packed)
        return std::move(packed.error());
      out.kind = static_cast<uint8_t>(cfg_.compression == compression::lz4
                                        ? frame_kind::inline_lz4
                                        : frame_kind::inline_zstd);
      out.data = wire_bytes{std::move(*packed)};
      counters_.bytes_inline_sent += out.data.size();
    } else {
      out.kind = static_cast<uint8_t>(frame_kind::inline_plain);
      auto holder = std::make_shared<serializers::frame>(std::move(frame));
      auto bytes = holder->bytes();
      out.data = wire_bytes{bytes, std::move(holder)};
      counters_.bytes_inline_sent += out.size;
    }
    result.frames.emplace_back(std::move(out));
  }
  return caf::none;
}

caf::expected<link_state::encoded_value>
link_state::encode_value(std::type_index type, const void* value,
                         const std::shared_ptr<const void>& keep_alive) {
  auto& reg = node_.registry();
  if (auto* plan = send_plan_for(type)) {
    if (auto frames = reg.encode(*plan, value, enc_opts_, keep_alive)) {
      auto header = serializers::encode_header(plan->header_key(), *frames);
      return encoded_value{std::move(header), std::move(*frames),
                           plan->family()};
    }
    // The family refused this value: the general path tries the next one,
    // or names every family tried.
  }
  auto encoded = reg.encode(type, value, enc_opts_, keep_alive);
  if (!encoded)
    return std::move(encoded.error());
  return encoded_value{serializers::encode_header(encoded->header),
                       std::move(encoded->frames),
                       std::move(encoded->header.family)};
}

const serializers::registry::encode_plan*
link_state::send_plan_for(std::type_index type) {
  auto& reg = node_.registry();
  auto generation = reg.generation();
  auto same = [&](const send_plan& x) {
    return x.type == type && x.generation == generation;
  };
  auto* found = send_plans_.find(same);
  // Once the cache is full, types without a plan take the general path
  // without planning again for every message.
  if (found == nullptr && !send_plans_.full())
    found = send_plans_.add(
      send_plan{type, generation, reg.plan_encode(type, enc_opts_)}, same);
  return found != nullptr && found->plan ? &*found->plan : nullptr;
}

uint64_t link_state::add_transfer(std::shared_ptr<serializers::frame> frame) {
  std::lock_guard<std::mutex> guard{transfers_mtx_};
  auto id = next_transfer_++;
  transfers_.emplace(id, held_transfer{std::move(frame)});
  return id;
}

caf::error
link_state::export_handles(const std::vector<store::transfer_ticket>& tickets,
                           wire_element& element,
                           std::vector<uint64_t>& transfers) {
  auto* store = node_.store();
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
    auto known = std::find_if(element.frames.begin(), element.frames.end(),
                              [id](const wire_frame& x) {
                                return x.object_id == id;
                              });
    if (known != element.frames.end())
      continue; // the same object twice: one copy serves both handles
    wire_frame out;
    out.size = ref.size();
    out.object_id = id;
    auto bytes = ref.bytes();
    auto holder = std::make_shared<store::object_ref>(std::move(ref));
    if (out.size < cfg_.pull_threshold) {
      // Small: the bytes go with the message (no round trip to pull them).
      out.kind = static_cast<uint8_t>(frame_kind::inline_handle);
      out.data = wire_bytes{bytes, std::move(holder)};
      counters_.bytes_inline_sent += out.size;
    } else {
      out.kind = static_cast<uint8_t>(frame_kind::remote_handle);
      out.ticket = add_transfer(std::make_shared<serializers::frame>(
        serializers::frame::view(bytes, std::move(holder))));
      transfers.push_back(out.ticket);
    }
    element.frames.emplace_back(std::move(out));
  }
  return caf::none;
}

caf::error
link_state::encode_message(uint64_t target, const caf::strong_actor_ptr& sender,
                           caf::message_id mid, const caf::message& msg,
                           std::vector<store::transfer_ticket>& tickets,
                           std::vector<uint64_t>& transfers,
                           inline_one<std::string>& families,
                           wire_message& out) {
  out.target = target;
  out.mid = mid.integer_value();
  if (sender)
    out.sender = export_actor(sender);
  auto keep_alive = std::make_shared<caf::message>(msg);
  for (size_t pos = 0; pos < msg.size(); ++pos) {
    if (msg.match_element<caf::error>(pos)) {
      out.error = msg.get_as<caf::error>(pos);
      continue;
    }
    std::type_index type{typeid(void)};
    auto name = node_.element_type(msg, pos, type);
    if (name == nullptr)
      return caf::make_error(
        errc::unregistered_type,
        "cannot send element " + std::to_string(pos) + " of type "
          + describe_element(msg, pos) + " to node " + peer_name_
          + ": the type is not registered; call "
            "cfg.add_message_type<T>(\"name\") in both processes");
    auto& family = families.emplace_back();
    auto& element = out.elements.emplace_back();
    if (auto err = encode_element(type, msg.at(pos), keep_alive, family,
                                  tickets, transfers, element))
      return err;
  }
  // One pass: payload bytes against max-message-size (what the encoder and
  // the puller check, not the wire's own headers), inline bytes against
  // CAF's BASP limit.
  uint64_t size = 0;
  uint64_t inline_bytes = wire_overhead;
  for (auto& element : out.elements) {
    inline_bytes += element.header.size();
    for (auto& frame : element.frames) {
      size += frame.size;
      inline_bytes += frame.data.size() + 32;
    }
  }
  if (size > cfg_.max_message_size)
    return caf::make_error(
      errc::message_too_large,
      "message to node " + peer_name_ + " needs " + std::to_string(size)
        + " bytes in all frames, above the link's max-message-size of "
        + std::to_string(cfg_.max_message_size)
        + "; raise max-message-size on both nodes or send less");
  if (inline_bytes > basp_payload_limit)
    return caf::make_error(
      errc::message_too_large,
      "message to node " + peer_name_ + " needs " + std::to_string(inline_bytes)
        + " bytes inline, above CAF's 32-bit BASP limit; lower "
          "pull-threshold (or spill-threshold on one host) so large frames "
          "leave the message");
  return caf::none;
}

caf::error link_state::send(uint64_t target,
                            const caf::strong_actor_ptr& sender,
                            caf::message_id mid, caf::message msg,
                            caf::execution_unit* host) {
  if (down_)
    return caf::make_error(errc::link_down,
                           "the link to node " + peer_name_ + " is down");
  std::vector<store::transfer_ticket> tickets;
  std::vector<uint64_t> transfers;
  inline_one<std::string> families;
  auto fail = [&](caf::error err) {
    if (auto* store = node_.store())
      for (auto& ticket : tickets)
        static_cast<void>(store->cancel(ticket));
    for (auto id : transfers)
      finish_transfer(id);
    ++counters_.send_errors;
    return err;
  };
  wire_message out;
  if (auto err = encode_message(target, sender, mid, msg, tickets, transfers,
                                families, out))
    return fail(std::move(err));
  auto size = wire_size(out);
  // Responses never wait, and neither does a delivery: a message delivered
  // to a proxy of another link (an actor forwarded from a third node) is
  // sent on the thread reading CAF's messages, which must not stop reading
  // for credit that it would itself have to read.
  if (auto err = acquire_credit(size, !mid.is_response() && !delivering))
    return fail(std::move(err));
  ++counters_.messages_sent;
  for (auto& family : families)
    count_sent_family(family);
  if (mid.is_request() && sender) {
    // shut_down sets down_ before it takes pending_ under this lock: a
    // request either lands in pending_ before that (and gets link_down from
    // shut_down) or sees down_ here.
    std::lock_guard<std::mutex> guard{requests_mtx_};
    if (down_)
      return fail(caf::make_error(errc::link_down, "the link to node "
                                                     + peer_name_
                                                     + " went down"));
    pending_.emplace(std::make_pair(sender->id(), request_key(mid)),
                     pending_request{
                       caf::actor_cast<caf::weak_actor_ptr>(sender), mid});
  }
  post(std::move(out), size, tickets, transfers, host);
  return caf::none;
}

namespace {

// Messages up to this size may join a batch; a batch holds at most this many
// bytes.
constexpr uint64_t batch_item_bytes = 16 * 1024;
constexpr uint64_t batch_bytes = 256 * 1024;
// Receivers refuse larger batches (wire_batch::load); a batch is flushed once
// it reaches batch_bytes, and wire_size counts every message as at least
// wire_overhead bytes.
static_assert(batch_bytes / wire_overhead + 1 <= max_batch_messages);

caf::behavior flusher(caf::event_based_actor*, std::weak_ptr<link_state> link) {
  return {
    [link](flush_atom) {
      if (auto l = link.lock())
        l->flush();
    },
  };
}

} // namespace

void link_state::post(wire_message&& msg, uint64_t size,
                      const std::vector<store::transfer_ticket>& tickets,
                      const std::vector<uint64_t>& transfers,
                      caf::execution_unit* host) {
  std::lock_guard<std::mutex> guard{post_mtx_};
  msg.token = outbound_token_;
  auto seq = posted_++;
  if (!transfers.empty()) {
    std::lock_guard<std::mutex> transfers_guard{transfers_mtx_};
    for (auto id : transfers)
      transfers_by_message_.emplace_back(seq, id);
  }
  if (!tickets.empty()) {
    // Kept until the peer's credit says it took the message; cancelled when
    // the link dies before that.
    auto spilled = [&](const store::transfer_ticket& ticket) {
      for (auto& element : msg.elements)
        for (auto& frame : element.frames)
          if (static_cast<frame_kind>(frame.kind) == frame_kind::store_object
              && frame.ticket == ticket.id)
            return true;
      return false;
    };
    std::unique_lock<std::mutex> tickets_guard{tickets_mtx_};
    if (down_) {
      // shut_down took in_transit_ already (it sets down_ first): nobody
      // would cancel these, and the message goes nowhere.
      tickets_guard.unlock();
      if (auto* store = node_.store())
        for (auto& ticket : tickets)
          static_cast<void>(store->cancel(ticket));
      return;
    }
    for (auto& ticket : tickets)
      in_transit_.push_back({seq, ticket, !spilled(ticket)});
  }
  // A small message close behind the previous one joins the batch; the
  // flusher (or a full batch) sends it. Anything else goes out at once,
  // after the batch.
  auto now = std::chrono::steady_clock::now();
  auto burst = now - last_post_ < cfg_.batch_gap;
  last_post_ = now;
  if (burst && cfg_.batch_messages > 1 && size <= batch_item_bytes) {
    outbox_bytes_ += size;
    outbox_.emplace_back(std::move(msg));
    if (outbox_.size() >= cfg_.batch_messages || outbox_bytes_ >= batch_bytes) {
      flush_locked(host);
    } else if (!flush_scheduled_ && !down_) {
      flush_scheduled_ = true;
      if (!flusher_)
        flusher_ = node_.system().spawn(flusher, weak_from_this());
      caf::anon_send(flusher_, flush_atom::value);
    }
    return;
  }
  flush_locked(host);
  enqueue_locked(caf::make_message(std::move(msg)), host);
}

void link_state::flush() {
  std::lock_guard<std::mutex> guard{post_mtx_};
  flush_scheduled_ = false;
  flush_locked(nullptr);
}

void link_state::flush_locked(caf::execution_unit* host) {
  if (outbox_.empty())
    return;
  if (outbox_.size() == 1) {
    enqueue_locked(caf::make_message(std::move(outbox_.front())), host);
  } else {
    ++counters_.batches_sent;
    counters_.messages_batched += outbox_.size();
    wire_batch batch;
    batch.messages.swap(outbox_);
    enqueue_locked(caf::make_message(std::move(batch)), host);
  }
  outbox_.clear();
  outbox_bytes_ = 0;
}

void link_state::enqueue_locked(caf::message msg, caf::execution_unit* host) {
  if (down_)
    return;
  peer_gateway_->enqueue(caf::make_mailbox_element(
                           caf::actor_cast<caf::strong_actor_ptr>(
                             node_.gateway_handle()),
                           caf::make_message_id(), {}, std::move(msg)),
                         host);
}

void link_state::send_control_message(caf::message msg,
                                      caf::execution_unit* host) {
  if (down_)
    return;
  std::lock_guard<std::mutex> guard{post_mtx_};
  flush_locked(host);
  enqueue_locked(std::move(msg), host);
}

caf::error link_state::acquire_credit(uint64_t bytes, bool may_wait) {
  std::unique_lock<std::mutex> guard{credit_mtx_};
  auto fits = [&] {
    return down_
           || ((in_flight_bytes_ == 0
                || in_flight_bytes_ + bytes <= cfg_.window_bytes)
               && in_flight_messages_ < cfg_.window_messages);
  };
  // Waiting senders take credit in the order they came: a message larger
  // than what is left of the window (one above window-bytes needs an empty
  // link) would otherwise wait out send-timeout while smaller ones from other
  // senders keep taking what is freed. Responses never wait and bypass the
  // queue.
  if (may_wait && (!credit_waiters_.empty() || !fits())) {
    ++counters_.credit_waits;
    auto me = next_credit_waiter_++;
    credit_waiters_.push_back(me);
    auto my_turn = [&] {
      return down_ || (credit_waiters_.front() == me && fits());
    };
    auto leave = [&] {
      credit_waiters_.erase(
        std::find(credit_waiters_.begin(), credit_waiters_.end(), me));
      credit_cv_.notify_all(); // the next in line may fit as well
    };
    auto deadline = std::chrono::steady_clock::now() + cfg_.send_timeout;
    while (!my_turn()) {
      if (!probing_) {
        // The peer batches credit: ask for what it holds back.
        probing_ = true;
        guard.unlock();
        send_control(credit_probe{}, nullptr);
        guard.lock();
        continue;
      }
      if (credit_cv_.wait_until(guard, deadline) != std::cv_status::timeout
          || my_turn())
        continue;
      leave();
      return caf::make_error(
        errc::send_timeout,
        "no credit from node " + peer_name_ + " within "
          + std::to_string(cfg_.send_timeout.count())
          + " ms: its actors process messages slower than they arrive ("
          + std::to_string(in_flight_messages_) + " messages, "
          + std::to_string(in_flight_bytes_)
          + " bytes in flight, this message " + std::to_string(bytes)
          + "); raise send-timeout or window-bytes, or slow the sender down");
    }
    leave();
  }
  if (down_)
    return caf::make_error(errc::link_down,
                           "the link to node " + peer_name_ + " is down");
  in_flight_bytes_ += bytes;
  in_flight_messages_ += 1;
  if (in_flight_bytes_ > counters_.peak_in_flight_bytes)
    counters_.peak_in_flight_bytes = in_flight_bytes_;
  return caf::none;
}

void link_state::on_credit(const credit& x) {
  ++counters_.credits_received;
  {
    std::lock_guard<std::mutex> guard{credit_mtx_};
    in_flight_bytes_ -= std::min(in_flight_bytes_, x.bytes);
    in_flight_messages_ -= std::min(in_flight_messages_, x.messages);
    probing_ = false;
  }
  credit_cv_.notify_all();
  // The peer redeemed or cancelled the frame tickets of the messages it took.
  // A handle's ticket inside a message it refused before decoding is still
  // there: cancel what is left of those (a redeemed one is gone, and ticket
  // ids are never reused, so this cancels nothing else).
  std::vector<store::transfer_ticket> leftover;
  {
    std::lock_guard<std::mutex> guard{tickets_mtx_};
    while (!in_transit_.empty() && in_transit_.front().seq < x.delivered) {
      if (in_transit_.front().in_value)
        leftover.push_back(in_transit_.front().ticket);
      in_transit_.pop_front();
    }
  }
  if (auto* store = node_.store())
    for (auto& ticket : leftover)
      static_cast<void>(store->cancel(ticket));
  // Frames of taken messages: normally released by transfer_done already.
  std::vector<std::shared_ptr<serializers::frame>> released; // after the lock
  {
    std::lock_guard<std::mutex> guard{transfers_mtx_};
    while (!transfers_by_message_.empty()
           && transfers_by_message_.front().first < x.delivered) {
      if (auto frame = take_transfer_locked(transfers_by_message_.front().second))
        released.push_back(std::move(frame));
      transfers_by_message_.pop_front();
    }
  }
}

void link_state::on_probe() {
  credit batch;
  {
    std::lock_guard<std::mutex> guard{return_mtx_};
    if (unreturned_messages_ == 0) {
      // Nothing processed yet: return the next message as soon as it is.
      flush_requested_ = true;
      return;
    }
    batch = take_unreturned();
  }
  send_control(batch, nullptr);
}

void link_state::return_credit(uint64_t bytes, bool held) {
  if (held) {
    held_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    held_messages_.fetch_sub(1, std::memory_order_relaxed);
  }
  credit batch;
  {
    std::lock_guard<std::mutex> guard{return_mtx_};
    unreturned_bytes_ += bytes;
    unreturned_messages_ += 1;
    // Batch the credit (one control message per quarter window); a sender
    // that waits for the remainder asks for it with a probe.
    if (!flush_requested_ && unreturned_bytes_ < byte_batch_
        && unreturned_messages_ < message_batch_)
      return;
    batch = take_unreturned();
  }
  send_control(batch, nullptr);
}

credit link_state::take_unreturned() {
  flush_requested_ = false;
  credit result;
  result.bytes = std::exchange(unreturned_bytes_, 0);
  result.messages = std::exchange(unreturned_messages_, 0);
  result.delivered = taken_.load();
  return result;
}

credit_token link_state::take(uint64_t wire_size, bool held) {
  return credit_token{weak_from_this(), wire_size, held};
}

caf::error link_state::hold(const wire_message& msg, uint64_t wire_size) {
  // Relaxed: BASP workers taking two messages of the link at once may both
  // fit the last place; the limits bound memory, they are not a window.
  auto bytes = held_bytes_.load(std::memory_order_relaxed);
  auto messages = held_messages_.load(std::memory_order_relaxed);
  // (wire_size saturates at a peer's wild claims: no sum that wraps.)
  auto fits = messages == 0
              || (bytes <= cfg_.max_held_bytes
                  && wire_size <= cfg_.max_held_bytes - bytes
                  && messages < cfg_.max_held_messages);
  if (!fits && !answers_pending_request(msg)) {
    auto me = node_.config().node_name;
    return caf::make_error(
      errc::receiver_full,
      "node " + me + " holds " + std::to_string(messages) + " messages ("
        + std::to_string(bytes) + " bytes) from node " + peer_name_
        + " that its actors have not processed yet; its limits are "
        + std::to_string(cfg_.max_held_messages) + " messages and "
        + std::to_string(cfg_.max_held_bytes)
        + " bytes (max-held-messages, max-held-bytes); this message ("
        + std::to_string(wire_size) + " bytes, to actor "
        + std::to_string(msg.target) + ") is refused: node " + peer_name_
        + " sends beyond its credit window, or its window-messages or "
          "window-bytes exceed these limits; lower them on node "
        + peer_name_ + " or raise ferry.link.max-held-messages / "
        + "max-held-bytes on node " + me);
  }
  held_bytes_.fetch_add(wire_size, std::memory_order_relaxed);
  held_messages_.fetch_add(1, std::memory_order_relaxed);
  return caf::none;
}

bool link_state::admits(uint64_t token, const char* what) {
  if (token == inbound_token_)
    return true;
  ++counters_.dropped_wrong_token;
  log_limited(log_topic::wrong_token,
              std::string{"dropped "} + what + " said to come from node "
                + peer_name_
                + " without this link's token: a third node forged it "
                  "(CAF believes the source node a peer writes into a "
                  "routed message), or it is left over from an earlier "
                  "link to node " + peer_name_);
  return false;
}

void link_state::log_limited(log_topic topic, const std::string& line) {
  if (auto out = logged_[static_cast<size_t>(topic)].pass(line))
    node_.log(*out);
}

bool link_state::answers_pending_request(const wire_message& msg) {
  caf::message_id mid{msg.mid};
  if (!mid.is_response())
    return false;
  std::lock_guard<std::mutex> guard{requests_mtx_};
  auto i = pending_.find(std::make_pair(msg.target, request_key(mid)));
  return i != pending_.end() && !std::exchange(i->second.answer_held, true);
}

// -- link_state: receiving ----------------------------------------------------

caf::expected<caf::message>
link_state::decode_element(wire_element& element) {
  serializers::payload input;
  auto header_error = [&](caf::error err) {
    if (err
        == caf::make_error(serializers::errc::payload_too_large, err.context()))
      return caf::make_error(
        errc::message_too_large,
        "node " + peer_name_ + " sent a message above node "
          + node_.config().node_name + "'s max-message-size of "
          + std::to_string(cfg_.max_message_size)
          + " bytes; raise max-message-size on node "
          + node_.config().node_name + " (" + serializers::render(err) + ")");
    return err;
  };
  auto bytes = element.header.bytes();
  auto key = serializers::header_key(bytes);
  // A header whose key the link accepted before is read by its frame sizes
  // alone; any other gets every check.
  std::optional<serializers::registry::decode_plan> own;
  auto* plan = key.empty() ? nullptr : receive_plan_for(key);
  if (plan != nullptr) {
    if (auto err = serializers::decode_frame_sizes(
          bytes, key.size(), dec_opts_.limits, input.header.frame_sizes))
      return header_error(std::move(err));
  } else {
    if (auto err = serializers::decode_header(bytes, dec_opts_.limits,
                                              input.header))
      return header_error(std::move(err));
    auto& header = input.header;
    if (!node_.config().has_type(header.type_name))
      return caf::make_error(
        errc::unregistered_type,
        "node " + node_.config().node_name + " received type \""
          + header.type_name + "\" from node " + peer_name_
          + " but has not registered it; call cfg.add_message_type<T>(\""
          + header.type_name + "\") in this process too");
    if (std::find(cfg_.deserializers.begin(), cfg_.deserializers.end(),
                  header.family)
        == cfg_.deserializers.end())
      return caf::make_error(
        errc::family_refused,
        "node " + node_.config().node_name + " refuses family \""
          + header.family + "\" for type \"" + header.type_name
          + "\" on the link from node " + peer_name_
          + ": its deserializers are " + join(cfg_.deserializers)
          + "; add the family to deserializers in [ferry.links." + peer_name_
          + "] or remove it from the sender's serializers");
    auto made = node_.registry().plan_decode(header, dec_opts_);
    if (!made)
      return std::move(made.error());
    plan = keep_receive_plan(key, std::move(*made), own);
  }
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
        counters_.bytes_inline_received += in.size;
        break;
      case frame_kind::inline_lz4:
      case frame_kind::inline_zstd: {
        auto bytes = decompress(static_cast<frame_kind>(in.kind),
                                in.data.bytes(), in.size,
                                cfg_.max_message_size);
        if (!bytes)
          return std::move(bytes.error());
        counters_.bytes_inline_received += in.data.size();
        input.frames.emplace_back(serializers::frame{std::move(*bytes)});
        break;
      }
      case frame_kind::store_object: {
        auto* store = node_.store();
        if (!same_host_)
          // A ticket is redeemable by anyone who names it: a peer of
          // another host could take another sender's object in transit.
          return caf::make_error(
            errc::transfer_failed,
            "node " + peer_name_ + " sent a store ticket, but it does not "
            "share this host's store (another host, or another store "
            "name); such a node sends large frames to be pulled");
        if (store == nullptr)
          return caf::make_error(
            errc::transfer_failed,
            "node " + peer_name_ + " sent a store handle but this node has "
            "no store; enable ferry.store on both nodes of a host");
        store::transfer_ticket ticket;
        ticket.object = store::object_id{in.object_id};
        ticket.id = in.ticket;
        auto ref = store->redeem(ticket);
        if (!ref)
          return std::move(ref.error());
        if (ref->size() != in.size)
          return caf::make_error(errc::transfer_failed,
                                 "store object size does not match the frame");
        auto holder = std::make_shared<store::object_ref>(std::move(*ref));
        auto bytes = holder->bytes();
        input.frames.emplace_back(
          serializers::frame::view(bytes, std::move(holder)));
        counters_.bytes_spilled_received += in.size;
        break;
      }
      case frame_kind::remote_handle:
      case frame_kind::inline_handle:
        // Not payload frames: decode_message imported their objects.
        break;
      default:
        return caf::make_error(errc::decode_failed,
                               "unknown frame kind "
                                 + std::to_string(static_cast<int>(in.kind)));
    }
  }
  auto result = node_.registry().decode_message(*plan, std::move(input),
                                                 dec_opts_);
  if (result)
    count_received_family(plan->family());
  return result;
}

namespace {

/// Returns a predicate for plans of headers with `key` made in `generation`.
auto plan_for_key(std::span<const std::byte> key, uint64_t generation) {
  return [key, generation](const auto& x) {
    return x.generation == generation && x.key.size() == key.size()
           && std::memcmp(x.key.data(), key.data(), key.size()) == 0;
  };
}

} // namespace

const serializers::registry::decode_plan*
link_state::receive_plan_for(std::span<const std::byte> key) const {
  auto* found = receive_plans_.find(
    plan_for_key(key, node_.registry().generation()));
  return found != nullptr ? &found->plan : nullptr;
}

const serializers::registry::decode_plan* link_state::keep_receive_plan(
  std::span<const std::byte> key, serializers::registry::decode_plan plan,
  std::optional<serializers::registry::decode_plan>& own) {
  auto generation = plan.generation();
  // A copy of the plan goes in: if the cache fills meanwhile, it is needed
  // here.
  if (!receive_plans_.full())
    if (auto* kept = receive_plans_.add(
          receive_plan{{key.begin(), key.end()}, generation, plan},
          plan_for_key(key, generation)))
      return &kept->plan;
  own = std::move(plan);
  return &*own;
}

caf::expected<store::object_builder>
link_state::create_import(uint64_t object_id, uint64_t size) {
  auto* store = node_.store();
  auto copy = store != nullptr
                ? store->create(size)
                : caf::expected<store::object_builder>{caf::make_error(
                  errc::transfer_failed,
                  "this node has no store; enable ferry.store to receive "
                  "store handles")};
  if (!copy)
    return caf::make_error(errc::transfer_failed,
                           "cannot copy object " + std::to_string(object_id)
                             + " (" + std::to_string(size) + " bytes) that node "
                             + peer_name_
                             + " sent a handle to into this node's store: "
                             + render(copy.error()));
  return copy;
}

caf::expected<caf::message> link_state::decode_message(wire_message& msg) {
  if (msg.error)
    return caf::make_message(std::move(msg.error));
  for (auto& element : msg.elements)
    for (auto& frame : element.frames) {
      auto kind = static_cast<frame_kind>(frame.kind);
      auto imported = [&] {
        return std::any_of(msg.imports.begin(), msg.imports.end(),
                           [&](auto& x) { return x.first == frame.object_id; });
      };
      if (kind == frame_kind::remote_object
          || (kind == frame_kind::remote_handle && !imported()))
        return caf::make_error(
          errc::transfer_failed,
          "node " + peer_name_ + " sent " + std::to_string(frame.size)
            + " bytes to pull (a large frame or a store handle) in a message "
              "that is decoded without pulling (spawn arguments); pass large "
              "values and store handles to another host in a message after "
              "the spawn");
      if (kind != frame_kind::inline_handle)
        continue;
      if (imported()) {
        // CAF's read put it into this host's store (wire.cpp).
        counters_.bytes_inline_received += frame.size;
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
      counters_.bytes_inline_received += frame.size;
      msg.imports.emplace_back(frame.object_id, std::move(*ref));
    }
  // Handles of the peer's store resolve to the local copies. From another
  // host nothing else resolves: a handle naming this host's store would
  // give the peer an object it was never sent (ids are easy to guess).
  std::optional<store::import_scope> scope;
  if (!same_host_ || !msg.imports.empty()) {
    scope.emplace(peer_store_token_,
                  same_host_ ? store::import_scope::others::resolve
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

void link_state::refuse(wire_message& msg, caf::error reason,
                        credit_token& token, caf::execution_unit* host) {
  ++counters_.refusals;
  caf::message_id mid{msg.mid};
  // Cancel tickets of store frames not redeemed yet (a peer sharing the
  // store only: another host's could cancel tickets it guessed), release
  // pulled frames.
  auto* store = node_.store();
  for (auto& element : msg.elements)
    for (auto& frame : element.frames) {
      auto kind = static_cast<frame_kind>(frame.kind);
      if (kind == frame_kind::store_object && store != nullptr
          && same_host_) {
        store::transfer_ticket ticket;
        ticket.object = store::object_id{frame.object_id};
        ticket.id = frame.ticket;
        static_cast<void>(store->cancel(ticket));
      } else if (is_pulled(kind)) {
        send_control(transfer_done{frame.ticket}, host);
      }
    }
  token.release();
  if (mid.is_request()) {
    wire_message answer;
    answer.target = msg.sender;
    answer.sender = msg.target;
    answer.mid = mid.response_id().integer_value();
    answer.error = reason;
    auto size = wire_size(answer);
    if (acquire_credit(size, false) == caf::none)
      post(std::move(answer), size, {}, {}, host);
  } else {
    log_limited(log_topic::refused, "refused a message from node "
                                      + peer_name_ + ": " + render(reason));
    send_control(refusal{msg.target, reason}, host);
  }
}

void link_state::receive(wire_message& msg, uint64_t wire_bytes_count,
                         caf::execution_unit* host) {
  if (auto err = hold(msg, wire_bytes_count)) {
    // Its credit goes back all the same: a well-behaved sender whose window
    // exceeds this node's limits keeps its window.
    refuse_taken(msg, wire_bytes_count, std::move(err), host, false);
    return;
  }
  auto remote = has_pulled_frames(msg);
  caf::actor puller; // a copy: shut_down swaps puller_ under the lock
  {
    std::unique_lock<std::mutex> guard{inbox_mtx_};
    if (!draining_ && !remote) {
      guard.unlock();
      deliver(msg, wire_bytes_count, host);
      return;
    }
    inbox_.emplace_back(std::move(msg), wire_bytes_count);
    if (draining_)
      return;
    draining_ = true;
    if (!puller_)
      puller_ = spawn_puller(node_.system(), weak_from_this());
    puller = puller_;
  }
  caf::anon_send(puller, pull_atom::value);
}

std::optional<std::pair<wire_message, uint64_t>> link_state::take_queued() {
  std::lock_guard<std::mutex> guard{inbox_mtx_};
  if (inbox_.empty()) {
    draining_ = false;
    return std::nullopt;
  }
  auto result = std::move(inbox_.front());
  inbox_.pop_front();
  return result;
}

caf::expected<chunk_reply> link_state::serve_chunk(const chunk_request& req) {
  std::unique_lock<std::mutex> guard{transfers_mtx_};
  auto i = transfers_.find(req.transfer);
  if (i == transfers_.end())
    return caf::make_error(errc::transfer_failed,
                           "node " + node_.config().node_name
                             + " holds no transfer "
                             + std::to_string(req.transfer) + " for node "
                             + peer_name_ + " (finished or link restarted)");
  auto frame = i->second.frame;
  auto bytes = frame->bytes();
  if (req.offset > bytes.size() || req.length > bytes.size() - req.offset)
    return caf::make_error(errc::transfer_failed,
                           "node " + peer_name_ + " asked for bytes "
                             + std::to_string(req.offset) + " to "
                             + std::to_string(req.offset + req.length)
                             + " of transfer " + std::to_string(req.transfer)
                             + ", which holds "
                             + std::to_string(bytes.size()));
  if (req.length > cfg_.chunk_size * 4)
    return caf::make_error(errc::transfer_failed,
                           "node " + peer_name_ + " asked for a chunk of "
                             + std::to_string(req.length)
                             + " bytes, more than 4 times chunk-size ("
                             + std::to_string(cfg_.chunk_size)
                             + ") on node " + node_.config().node_name
                             + "; set the same chunk-size on both nodes");
  if (req.length > bytes.size() - i->second.served)
    return caf::make_error(errc::transfer_failed,
                           "node " + peer_name_ + " asked for "
                             + std::to_string(req.length)
                             + " more bytes of transfer "
                             + std::to_string(req.transfer) + ", of which "
                             + std::to_string(i->second.served) + " of "
                             + std::to_string(bytes.size())
                             + " bytes were served already; a node pulls "
                               "each chunk once");
  i->second.served += req.length;
  guard.unlock();
  counters_.bytes_pulled_by_peer += req.length;
  return chunk_reply{req.landing,
                     wire_bytes{bytes.subspan(req.offset, req.length), frame}};
}

std::shared_ptr<serializers::frame>
link_state::take_transfer_locked(uint64_t id) {
  auto i = transfers_.find(id);
  if (i == transfers_.end())
    return nullptr;
  auto frame = std::move(i->second.frame);
  transfers_.erase(i);
  return frame;
}

void link_state::finish_transfer(uint64_t id) {
  std::shared_ptr<serializers::frame> released; // dropped after the lock
  std::lock_guard<std::mutex> guard{transfers_mtx_};
  released = take_transfer_locked(id);
}

namespace {

/// Counts a message as taken when it leaves scope (its tickets are redeemed
/// or cancelled by then).
struct taken_mark {
  std::atomic<uint64_t>& count;
  ~taken_mark() {
    ++count;
  }
};

} // namespace

void link_state::refuse_taken(wire_message& msg, uint64_t wire_size,
                              caf::error reason, caf::execution_unit* host,
                              bool held) {
  auto token = take(wire_size, held);
  taken_mark mark{taken_};
  refuse(msg, std::move(reason), token, host);
}

void link_state::deliver(wire_message& msg, uint64_t wire_bytes_count,
                         caf::execution_unit* host) {
  struct delivery_scope {
    bool outer = std::exchange(delivering, true);
    ~delivery_scope() { delivering = outer; }
  } scope;
  ++counters_.messages_received;
  auto token = take(wire_bytes_count);
  taken_mark mark{taken_};
  caf::message_id mid{msg.mid};
  if (mid.is_response()) {
    // Answered, delivered or not: a response that cannot be delivered must
    // not keep its request's entry for the link's lifetime.
    std::lock_guard<std::mutex> guard{requests_mtx_};
    pending_.erase(std::make_pair(msg.target, request_key(mid)));
  }
  auto target = exported(msg.target);
  if (!target)
    target = node_.exposed(msg.target);
  if (!target) {
    refuse(msg, caf::make_error(errc::no_such_actor,
                           "node " + node_.config().node_name
                             + " has no actor " + std::to_string(msg.target)
                             + " for node " + peer_name_
                             + " (terminated or never exposed)"),
           token, host);
    return;
  }
  auto fail = [&](caf::error reason) {
    if (mid.is_response()) {
      // The requester gets the reason now instead of waiting out its
      // timeout; the peer hears of it too (refuse).
      target->enqueue(caf::make_mailbox_element(nullptr, mid, {}, reason),
                      host);
    }
    refuse(msg, std::move(reason), token, host);
  };
  caf::strong_actor_ptr sender;
  if (msg.sender != 0) {
    auto made = sender_proxy(msg.sender);
    if (made) {
      sender = std::move(*made);
    } else if (!mid.is_response()) {
      fail(std::move(made.error()));
      return;
    }
    // A response still reaches its requester, without a sender: the
    // requester waits for it, and it takes no slot in the table.
  }
  auto content = [&]() -> caf::expected<caf::message> {
    // Decoders turn what they throw into errors; this catches the rest (an
    // allocation failing outside them, say): a refusal, never a dead node.
    try {
      return decode_message(msg);
    } catch (...) {
      return caf::make_error(errc::decode_failed,
                             "decoding a message from node " + peer_name_
                               + " threw: "
                               + serializers::detail::current_exception_text());
    }
  }();
  if (!content) {
    fail(std::move(content.error()));
    return;
  }
  target->enqueue(caf::mailbox_element_ptr{new credited_element(
                    std::move(sender), mid, std::move(*content),
                    std::move(token))},
                  host);
}

// -- link_state: actors -------------------------------------------------------

caf::strong_actor_ptr link_state::proxy(uint64_t id) {
  return find_or_make_proxy(id, false);
}

caf::expected<caf::strong_actor_ptr> link_state::sender_proxy(uint64_t id) {
  if (auto result = find_or_make_proxy(id, true))
    return result;
  return caf::make_error(
    errc::too_many_proxies,
    "node " + node_.config().node_name + " refused a message from actor "
      + std::to_string(id) + " of node " + peer_name_ + ": the link keeps "
      + std::to_string(cfg_.max_proxies) + " proxies of that node's live "
      + "actors already (max-proxies); raise ferry.link.max-proxies (or "
      + "ferry.links." + peer_name_ + ") if the peer has that many actors "
      + "talking to this node");
}

caf::strong_actor_ptr link_state::find_or_make_proxy(uint64_t id,
                                                     bool limited) {
  std::lock_guard<std::mutex> guard{actors_mtx_};
  if (auto i = proxies_.find(id); i != proxies_.end())
    return i->second;
  // Proxies of a dead link or of actors reported down are made terminated
  // and take no slot; only a live proxy counts against max_proxies.
  auto dead = std::find_if(recently_down_.begin(), recently_down_.end(),
                           [id](const auto& x) { return x.first == id; });
  if (limited && !down_ && dead == recently_down_.end()
      && proxies_.size() >= cfg_.max_proxies)
    return nullptr;
  auto& sys = node_.system();
  caf::actor_config cfg;
  auto result = caf::make_actor<remote_proxy, caf::strong_actor_ptr>(
    sys.next_actor_id(), sys.node(), &sys, cfg, weak_from_this(), id);
  auto* impl = static_cast<remote_proxy*>(
    caf::actor_cast<caf::abstract_actor*>(result));
  if (down_) {
    impl->kill(caf::exit_reason::remote_link_unreachable, nullptr);
    return result;
  }
  if (dead != recently_down_.end()) {
    impl->kill(dead->second, nullptr);
    return result;
  }
  proxies_.emplace(id, result);
  return result;
}

uint64_t link_state::export_actor(const caf::strong_actor_ptr& whom) {
  auto id = whom->id();
  {
    std::lock_guard<std::mutex> guard{actors_mtx_};
    // Look up first: emplace would allocate a node for every message.
    if (exported_.count(id) != 0 || !exported_.emplace(id, whom).second)
      return id;
  }
  std::weak_ptr<link_state> weak = weak_from_this();
  whom->get()->attach_functor([weak, id](const caf::error& reason) {
    if (auto link = weak.lock()) {
      {
        std::lock_guard<std::mutex> guard{link->actors_mtx_};
        link->exported_.erase(id);
      }
      {
        // Nobody is left to answer: a request the peer never answers (a
        // response promise dropped there, which CAF 0.17 does not report)
        // would otherwise stay until the link goes down.
        std::lock_guard<std::mutex> guard{link->requests_mtx_};
        auto& pending = link->pending_;
        pending.erase(pending.lower_bound(std::make_pair(id, uint64_t{0})),
                      pending.lower_bound(std::make_pair(id + 1, uint64_t{0})));
      }
      link->send_control(down_notice{id, reason}, nullptr);
    }
  });
  return id;
}

spawn_slot::~spawn_slot() {
  if (link_ != nullptr)
    link_->cancel_spawn();
}

caf::expected<spawn_slot>
link_state::reserve_spawn(const std::string& type_name) {
  std::lock_guard<std::mutex> guard{actors_mtx_};
  if (spawned_.size() + spawns_reserved_ < cfg_.max_spawned_actors) {
    ++spawns_reserved_;
    return spawn_slot{this};
  }
  auto where = "node " + node_.config().node_name + " refused to spawn \""
               + type_name + "\" for node " + peer_name_ + ": ";
  if (cfg_.max_spawned_actors == 0)
    return caf::make_error(
      errc::too_many_actors,
      where + "its link to that node allows no spawns (max-spawned-actors "
        "is 0); to allow them, set max-spawned-actors above 0 on node "
        + node_.config().node_name + " in [ferry.link] or for " + peer_name_
        + " in [ferry.links]");
  return caf::make_error(
    errc::too_many_actors,
    where + "that node has " + std::to_string(cfg_.max_spawned_actors)
      + " live actors spawned here already (max-spawned-actors); let some "
        "of them end, or raise ferry.link.max-spawned-actors (or "
        "ferry.links." + peer_name_ + ") on node "
      + node_.config().node_name);
}

void link_state::cancel_spawn() {
  std::lock_guard<std::mutex> guard{actors_mtx_};
  --spawns_reserved_;
}

void link_state::adopt_spawned(spawn_slot slot, caf::actor whom) {
  auto id = whom.id();
  bool added = false;
  {
    std::lock_guard<std::mutex> guard{actors_mtx_};
    // The slot becomes the actor's entry.
    slot.link_ = nullptr;
    --spawns_reserved_;
    // shut_down sets down_ before it takes this lock: either it finds the
    // actor here, or the actor is not added and ends now.
    if (!down_) {
      spawned_.emplace(id, whom);
      added = true;
    }
  }
  if (!added) {
    caf::anon_send_exit(whom, caf::exit_reason::remote_link_unreachable);
    return;
  }
  // Not under the lock: for an actor that ended already, the functor runs
  // at once. `whom` keeps the actor alive meanwhile.
  std::weak_ptr<link_state> weak = weak_from_this();
  caf::actor_cast<caf::abstract_actor*>(whom)->attach_functor([weak, id] {
    if (auto link = weak.lock()) {
      caf::actor gone; // released after the lock
      std::lock_guard<std::mutex> guard{link->actors_mtx_};
      if (auto i = link->spawned_.find(id); i != link->spawned_.end()) {
        gone = std::move(i->second);
        link->spawned_.erase(i);
      }
    }
  });
}

caf::strong_actor_ptr link_state::exported(uint64_t id) {
  std::lock_guard<std::mutex> guard{actors_mtx_};
  auto i = exported_.find(id);
  return i != exported_.end() ? i->second : nullptr;
}

void link_state::on_down(uint64_t id, const caf::error& reason,
                         caf::execution_unit* host) {
  caf::strong_actor_ptr victim;
  {
    std::lock_guard<std::mutex> guard{actors_mtx_};
    if (auto i = proxies_.find(id); i != proxies_.end()) {
      victim = std::move(i->second);
      proxies_.erase(i);
    } else {
      if (recently_down_.size() == max_recently_down)
        recently_down_.pop_front();
      recently_down_.emplace_back(id, reason);
    }
  }
  if (victim)
    static_cast<remote_proxy*>(caf::actor_cast<caf::abstract_actor*>(victim))
      ->kill(reason, host);
}

void link_state::shut_down(const caf::error& reason,
                           caf::execution_unit* host) {
  if (down_.exchange(true))
    return;
  credit_cv_.notify_all();
  std::vector<caf::strong_actor_ptr> victims;
  decltype(spawned_) spawned;
  // Released after the lock: dropping the last reference to an actor runs
  // its cleanup on this thread, and export_actor's functor takes the lock.
  decltype(exported_) exports;
  {
    std::lock_guard<std::mutex> guard{actors_mtx_};
    for (auto& [id, ptr] : proxies_)
      victims.emplace_back(std::move(ptr));
    proxies_.clear();
    exports.swap(exported_);
    spawned.swap(spawned_);
  }
  for (auto& [id, child] : spawned)
    caf::anon_send_exit(child, caf::exit_reason::remote_link_unreachable);
  // Store objects the peer never redeemed go before pending requests fail
  // and proxies die: a requester whose request failed with link_down finds
  // their memory freed.
  decltype(in_transit_) tickets;
  {
    std::lock_guard<std::mutex> guard{tickets_mtx_};
    tickets.swap(in_transit_);
  }
  if (auto* store = node_.store())
    for (auto& entry : tickets)
      static_cast<void>(store->cancel(entry.ticket));
  {
    std::lock_guard<std::mutex> guard{transfers_mtx_};
    transfers_.clear();
    transfers_by_message_.clear();
  }
  caf::actor puller;
  {
    std::lock_guard<std::mutex> guard{inbox_mtx_};
    inbox_.clear();
    puller.swap(puller_);
  }
  if (puller)
    caf::anon_send_exit(puller, caf::exit_reason::remote_link_unreachable);
  caf::actor flusher;
  {
    std::lock_guard<std::mutex> guard{post_mtx_};
    outbox_.clear();
    flusher.swap(flusher_);
  }
  if (flusher)
    caf::anon_send_exit(flusher, caf::exit_reason::remote_link_unreachable);
  for (auto& victim : victims)
    static_cast<remote_proxy*>(caf::actor_cast<caf::abstract_actor*>(victim))
      ->kill(reason, host);
  // Fail every request still waiting for an answer from the peer.
  decltype(pending_) pending;
  {
    std::lock_guard<std::mutex> guard{requests_mtx_};
    pending.swap(pending_);
  }
  for (auto& [key, entry] : pending)
    if (auto requester
        = caf::actor_cast<caf::strong_actor_ptr>(entry.requester))
      requester->enqueue(
        caf::make_mailbox_element(
          nullptr, entry.mid.response_id(), {},
          caf::make_error(errc::link_down,
                          "the link to node " + peer_name_
                            + " went down before the response arrived: "
                            + render(reason))),
        host);
}

// -- link_state: stats --------------------------------------------------------

family_counters::family_counters(std::vector<std::string> names)
  : names_(std::move(names)),
    counts_(std::make_unique<std::atomic<uint64_t>[]>(names_.size())) {
  // nop
}

void family_counters::count(std::string_view family) {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == family) {
      counts_[i].fetch_add(1, std::memory_order_relaxed);
      return;
    }
}

std::map<std::string, uint64_t> family_counters::snapshot() const {
  std::map<std::string, uint64_t> result;
  for (size_t i = 0; i < names_.size(); ++i)
    if (auto n = counts_[i].load(std::memory_order_relaxed); n > 0)
      result.emplace(names_[i], n);
  return result;
}

void link_state::count_sent_family(const std::string& family) {
  sent_by_family_.count(family);
}

void link_state::count_received_family(const std::string& family) {
  received_by_family_.count(family);
}

link_stats link_state::snapshot() const {
  link_stats result;
  result.peer = peer_name_;
  result.same_host = same_host_;
  result.send_families = send_families_;
  result.messages_sent = counters_.messages_sent;
  result.messages_received = counters_.messages_received;
  result.bytes_inline_sent = counters_.bytes_inline_sent;
  result.bytes_inline_received = counters_.bytes_inline_received;
  result.bytes_spilled_sent = counters_.bytes_spilled_sent;
  result.bytes_spilled_received = counters_.bytes_spilled_received;
  result.bytes_pulled_by_peer = counters_.bytes_pulled_by_peer;
  result.bytes_pulled = counters_.bytes_pulled;
  result.refusals = counters_.refusals;
  result.refused_by_peer = counters_.refused_by_peer;
  result.send_errors = counters_.send_errors;
  result.credit_waits = counters_.credit_waits;
  result.peak_in_flight_bytes = counters_.peak_in_flight_bytes;
  result.held_messages = held_messages_.load(std::memory_order_relaxed);
  result.held_bytes = held_bytes_.load(std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> guard{requests_mtx_};
    result.pending_requests = pending_.size();
  }
  result.credits_received = counters_.credits_received;
  result.batches_sent = counters_.batches_sent;
  result.messages_batched = counters_.messages_batched;
  result.dropped_wrong_token = counters_.dropped_wrong_token;
  {
    std::lock_guard<std::mutex> guard{tickets_mtx_};
    result.tickets_in_transit = in_transit_.size();
  }
  {
    std::lock_guard<std::mutex> guard{transfers_mtx_};
    result.transfers_held = transfers_.size();
  }
  {
    std::lock_guard<std::mutex> guard{actors_mtx_};
    result.proxies = proxies_.size();
    result.spawned_actors = spawned_.size();
  }
  result.sent_by_family = sent_by_family_.snapshot();
  result.received_by_family = received_by_family_.snapshot();
  return result;
}

} // namespace ferry::detail
