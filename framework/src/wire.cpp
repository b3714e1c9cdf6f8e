// The flat encoding of wire_message (see detail/wire.hpp).
//
//   u32 head length (CAF's integer encoding), then the head, little-endian:
//     u64 target, u64 sender, u64 mid, u8 flags (bit 0: an error follows),
//     u32 element count, and per element
//       u32 header length, u32 frame count, and per frame
//         u8 kind, u64 size, u64 object id, u64 ticket, u64 data length;
//   then every element's header bytes and its frames' data bytes, in order;
//   then, if flag bit 0 is set, u32 length and the caf::error in that many
//   bytes (its length lets a reader that cannot read the error, a type in
//   its context unknown here, still find where the message ends).
//
// Reading checks the head length against the bytes left, every count
// against what the rest of the head can hold, and the sum of all lengths
// against the bytes left, before allocating anything. Small pieces share one
// buffer; pieces of 64 KiB or more get buffers of their own, so decoders can
// adopt them without a copy.
#include "detail/wire.hpp"

#include "ferry/errc.hpp"

#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/detail/little_endian.hpp"

#include <caf/binary_serializer.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <unordered_map>

namespace ferry::detail {

namespace {

constexpr size_t fixed_head = 8 + 8 + 8 + 8 + 1 + 4;
constexpr size_t element_head = 4 + 4;
constexpr size_t frame_head = 1 + 8 + 8 + 8 + 8;
constexpr uint8_t has_error_flag = 1;
// Pieces at least this large are read into buffers of their own.
constexpr uint64_t own_buffer_threshold = 64 * 1024;
// Heads up to this size are written from the stack (one element with up to
// 12 frames).
constexpr size_t small_head = 512;
// A head describes at most this many bytes (4096 frames of one element).
constexpr uint32_t max_head = fixed_head + element_head + 4096 * frame_head;

class head_writer {
public:
  /// Writes to `out`, which has room for the whole head.
  explicit head_writer(std::byte* out) : out_(out) {
    // nop
  }

  template <class T>
  void put(T x) {
    out_ = serializers::detail::put_le(out_, static_cast<uint64_t>(x),
                                       sizeof(T));
  }

private:
  std::byte* out_;
};

class head_reader {
public:
  explicit head_reader(std::span<const std::byte> in) : in_(in) {
    // nop
  }

  template <class T>
  bool get(T& x) {
    if (in_.size() - pos_ < sizeof(T))
      return false;
    x = static_cast<T>(
      serializers::detail::get_le(in_.data() + pos_, sizeof(T)));
    pos_ += sizeof(T);
    return true;
  }

  /// Skips `n` bytes.
  /// REQUIRES: `n <= remaining()`.
  void skip(size_t n) {
    pos_ += n;
  }

  size_t remaining() const {
    return in_.size() - pos_;
  }

private:
  std::span<const std::byte> in_;
  size_t pos_ = 0;
};

caf::error malformed(const std::string& what) {
  return caf::make_error(errc::decode_failed,
                         "malformed ferry.msg from the peer: " + what);
}

} // namespace

// -- import stores ------------------------------------------------------------

namespace {

/// Where a system's messages land their inline handles, and how much of it
/// objects landed ahead of their delivery may take.
struct import_target {
  store::object_store store;
  /// Bytes of landed objects whose messages are still in CAF's pipeline
  /// (or held back behind a pulled message): not yet delivered.
  std::shared_ptr<std::atomic<uint64_t>> ahead;
  uint64_t limit = 0;
};

struct import_store_registry {
  std::mutex mtx;
  std::vector<std::pair<const caf::actor_system*, import_target>> entries;
};

import_store_registry& import_stores() {
  // Never destroyed: BASP workers may read messages while the process exits.
  static auto* registry = new import_store_registry;
  return *registry;
}

/// The import target of the system reading from `source`, if it has one.
std::optional<import_target> import_target_for(caf::deserializer& source) {
  auto* ctx = source.context();
  if (ctx == nullptr)
    return std::nullopt;
  const auto* sys = &ctx->system();
  auto& reg = import_stores();
  std::lock_guard<std::mutex> guard{reg.mtx};
  for (auto& [owner, target] : reg.entries)
    if (owner == sys)
      return target;
  return std::nullopt;
}

/// A landed object as its frame holds it: keeps the bytes the frame views
/// and gives the object's share of the budget back when the message goes.
struct landed_object {
  store::object_ref ref;
  std::shared_ptr<std::atomic<uint64_t>> ahead;
  uint64_t size = 0;

  ~landed_object() {
    ahead->fetch_sub(size, std::memory_order_relaxed);
  }
};

/// Copies the next `n` bytes of `source` into a new sealed object of the
/// target's store and returns it with what keeps it counted; returns a null
/// keep-alive, reading nothing, when the objects landed ahead would exceed
/// the target's limit or the store cannot take them (the frame is then
/// read into memory and decoding copies it, naming the store's error if
/// that fails too).
std::pair<store::object_ref, std::shared_ptr<const void>>
land_in_store(import_target& target, caf::binary_deserializer& source,
              uint64_t n) {
  auto before = target.ahead->fetch_add(n, std::memory_order_relaxed);
  auto held = std::make_shared<landed_object>();
  held->ahead = target.ahead;
  held->size = n; // from here on, `held` gives the bytes back
  if (before > target.limit || n > target.limit - before)
    return {};
  auto object = target.store.create(n);
  if (!object)
    return {};
  std::memcpy(object->bytes().data(), next_bytes(source, n).data(), n);
  auto ref = object->seal();
  if (!ref)
    return {};
  source.skip(static_cast<size_t>(n));
  held->ref = *ref;
  return {std::move(*ref), std::move(held)};
}

} // namespace

void register_import_store(const caf::actor_system* sys,
                           store::object_store store) {
  import_target target;
  target.limit = store.capacity() / import_ahead_share;
  target.store = std::move(store);
  target.ahead = std::make_shared<std::atomic<uint64_t>>(0);
  auto& reg = import_stores();
  std::lock_guard<std::mutex> guard{reg.mtx};
  for (auto& [owner, x] : reg.entries)
    if (owner == sys) {
      x = std::move(target);
      return;
    }
  reg.entries.emplace_back(sys, std::move(target));
}

void unregister_import_store(const caf::actor_system* sys) {
  auto& reg = import_stores();
  std::lock_guard<std::mutex> guard{reg.mtx};
  std::erase_if(reg.entries, [sys](auto& x) { return x.first == sys; });
}

caf::error wire_message::save(caf::serializer& sink) const {
  size_t frames = 0;
  for (auto& element : elements)
    frames += element.frames.size();
  auto head_size = fixed_head + elements.size() * element_head
                   + frames * frame_head;
  // The head of a message with a few frames fits on the stack.
  std::array<std::byte, small_head> inline_head;
  std::vector<std::byte> heap_head;
  std::byte* head = inline_head.data();
  if (head_size > small_head) {
    heap_head.resize(head_size);
    head = heap_head.data();
  }
  head_writer w{head};
  w.put(target);
  w.put(sender);
  w.put(mid);
  w.put(token);
  w.put(static_cast<uint8_t>(error ? has_error_flag : 0));
  w.put(static_cast<uint32_t>(elements.size()));
  for (auto& element : elements) {
    w.put(static_cast<uint32_t>(element.header.size()));
    w.put(static_cast<uint32_t>(element.frames.size()));
    for (auto& frame : element.frames) {
      w.put(frame.kind);
      w.put(frame.size);
      w.put(frame.object_id);
      w.put(frame.ticket);
      w.put(static_cast<uint64_t>(frame.data.size()));
    }
  }
  auto head_length = static_cast<uint32_t>(head_size);
  if (auto err = sink(head_length))
    return err;
  if (auto err = sink.apply_raw(head_size, head))
    return err;
  auto put_bytes = [&](const wire_bytes& bytes) -> caf::error {
    if (bytes.size() == 0)
      return caf::none;
    return sink.apply_raw(bytes.size(),
                          const_cast<std::byte*>(bytes.bytes().data()));
  };
  for (auto& element : elements) {
    if (auto err = put_bytes(element.header))
      return err;
    for (auto& frame : element.frames)
      if (auto err = put_bytes(frame.data))
        return err;
  }
  if (!error)
    return caf::none;
  std::vector<char> buf;
  caf::binary_serializer inner{sink.context(), buf};
  if (auto err = inner(const_cast<caf::error&>(error)))
    return err;
  auto length = static_cast<uint32_t>(buf.size());
  if (auto err = sink(length))
    return err;
  return sink.apply_raw(buf.size(), buf.data());
}

// -- hello --------------------------------------------------------------------

caf::error hello::save(caf::serializer& sink) const {
  auto& self = const_cast<hello&>(*this);
  if (auto err = sink(self.protocol))
    return err;
  return hello_fields(sink, self);
}

caf::error hello::load(caf::deserializer& source) {
  if (auto err = source(protocol))
    return err;
  if (protocol != wire_protocol_version)
    return caf::none;
  return hello_fields(source, *this);
}

// -- wire_batch ---------------------------------------------------------------

caf::error wire_batch::save(caf::serializer& sink) const {
  auto count = static_cast<uint32_t>(messages.size());
  if (auto err = sink(count))
    return err;
  for (auto& msg : messages)
    if (auto err = msg.save(sink))
      return err;
  return caf::none;
}

caf::error wire_batch::load(caf::deserializer& source) {
  auto* bin = dynamic_cast<caf::binary_deserializer*>(&source);
  if (bin == nullptr)
    return caf::make_error(errc::decode_failed,
                           "ferry.batch reads from CAF's binary format only");
  uint32_t count = 0;
  if (auto err = source(count))
    return err;
  if (count > max_batch_messages)
    return caf::make_error(errc::decode_failed,
                           "malformed ferry.batch from the peer: "
                             + std::to_string(count)
                             + " messages, more than a batch holds ("
                             + std::to_string(max_batch_messages) + ")");
  // Each message takes at least its head length and fixed head.
  if (count > bin->remaining() / (4 + fixed_head))
    return caf::make_error(errc::decode_failed,
                           "malformed ferry.batch from the peer: "
                             + std::to_string(count) + " messages in "
                             + std::to_string(bin->remaining()) + " bytes");
  messages.clear();
  messages.resize(count);
  for (auto& msg : messages)
    if (auto err = msg.load(source))
      return err;
  return caf::none;
}

caf::error wire_message::load(caf::deserializer& source) {
  auto* bin = dynamic_cast<caf::binary_deserializer*>(&source);
  if (bin == nullptr)
    return caf::make_error(errc::decode_failed,
                           "ferry.msg reads from CAF's binary format only");
  uint32_t head_size = 0;
  if (auto err = source(head_size))
    return err;
  if (head_size < fixed_head || head_size > max_head
      || head_size > bin->remaining())
    return malformed("a head of " + std::to_string(head_size) + " bytes ("
                     + std::to_string(bin->remaining()) + " bytes left)");
  // The head is read where CAF holds it; the pieces follow it.
  auto rest = bin->remainder();
  std::span<const std::byte> head{
    reinterpret_cast<const std::byte*>(rest.data()), head_size};
  bin->skip(head_size);
  uint64_t available = bin->remaining();
  head_reader r{head};
  uint8_t flags = 0;
  uint32_t element_count = 0;
  r.get(target);
  r.get(sender);
  r.get(mid);
  r.get(token);
  r.get(flags);
  r.get(element_count);
  if (element_count > r.remaining() / element_head)
    return malformed(std::to_string(element_count)
                     + " elements in a head that holds fewer");
  // First pass over the head: counts and lengths, checked before anything
  // is allocated for the pieces.
  uint64_t total = 0;
  uint64_t shared_total = 0;
  auto count = [&](uint64_t length, bool shareable = true) -> bool {
    if (length > available - total)
      return false;
    total += length;
    if (shareable && length < own_buffer_threshold)
      shared_total += length;
    return true;
  };
  // Where inline store handles land (looked up at the first one).
  bool looked_up = false;
  std::optional<import_target> import_to;
  auto lands = [&](const wire_frame& frame, uint64_t data_size) {
    if (static_cast<frame_kind>(frame.kind) != frame_kind::inline_handle
        || data_size == 0 || data_size != frame.size)
      return false;
    if (!looked_up) {
      import_to = import_target_for(source);
      looked_up = true;
    }
    return import_to.has_value();
  };
  elements.clear();
  imports.clear();
  elements.resize(element_count);
  for (size_t e = 0; e < element_count; ++e) {
    uint32_t header_size = 0;
    uint32_t frame_count = 0;
    r.get(header_size);
    if (!r.get(frame_count) || frame_count > r.remaining() / frame_head)
      return malformed("element " + std::to_string(e) + " claims "
                       + std::to_string(frame_count)
                       + " frames, more than its head holds");
    if (!count(header_size))
      return malformed("element " + std::to_string(e) + " claims a header of "
                       + std::to_string(header_size)
                       + " bytes, more than the message holds");
    auto& frames = elements[e].frames;
    frames.resize(frame_count);
    for (size_t f = 0; f < frame_count; ++f) {
      auto& frame = frames[f];
      uint64_t data_size = 0;
      r.get(frame.kind);
      r.get(frame.size);
      r.get(frame.object_id);
      r.get(frame.ticket);
      r.get(data_size);
      if (!count(data_size, !lands(frame, data_size)))
        return malformed("frame " + std::to_string(f) + " of element "
                         + std::to_string(e) + " claims "
                         + std::to_string(data_size)
                         + " bytes, more than the message holds");
    }
  }
  if (r.remaining() != 0)
    return malformed(std::to_string(r.remaining()) + " bytes after the head");
  // Second pass over the (now checked) head for the lengths, reading the
  // pieces in stream order: small pieces share one buffer, large ones get
  // their own.
  // One allocation holds the small pieces and their reference count.
  std::shared_ptr<std::byte[]> shared;
  if (shared_total > 0)
    shared = std::make_shared_for_overwrite<std::byte[]>(shared_total);
  // The pieces are copied straight from CAF's buffer (every length is
  // checked against it above): a large piece's buffer is not zeroed first.
  size_t offset = 0;
  auto read_piece = [&](wire_bytes& slot, uint64_t length) {
    if (length >= own_buffer_threshold) {
      slot = wire_bytes::take_from(*bin, length);
    } else if (length > 0) {
      auto* at = shared.get() + offset;
      std::memcpy(at, bin->remainder().data(), length);
      bin->skip(length);
      slot = wire_bytes{{at, length}, shared};
      offset += length;
    } else {
      slot = wire_bytes{};
    }
  };
  head_reader lengths{head.subspan(fixed_head)};
  for (auto& element : elements) {
    uint32_t header_size = 0;
    lengths.get(header_size);
    lengths.skip(4); // frame count
    read_piece(element.header, header_size);
    for (auto& frame : element.frames) {
      uint64_t data_size = 0;
      lengths.skip(frame_head - 8); // kind, size, object id, ticket
      lengths.get(data_size);
      if (lands(frame, data_size)) {
        auto [ref, held] = land_in_store(*import_to, *bin, data_size);
        if (held) {
          frame.data = wire_bytes{ref.bytes(), std::move(held)};
          imports.emplace_back(frame.object_id, std::move(ref));
        } else {
          // Not landed: a buffer of its own (the shared one has no room
          // for it); decoding copies it into the store.
          frame.data = wire_bytes::take_from(*bin, data_size);
        }
        continue;
      }
      read_piece(frame.data, data_size);
    }
  }
  error = caf::error{};
  if ((flags & has_error_flag) == 0)
    return caf::none;
  uint32_t length = 0;
  if (auto err = source(length))
    return err;
  if (length > bin->remaining())
    return malformed("an error of " + std::to_string(length) + " bytes ("
                     + std::to_string(bin->remaining()) + " bytes left)");
  caf::binary_deserializer inner{
    source.context(), reinterpret_cast<const char*>(bin->remainder().data()),
    length};
  bin->skip(length);
  // The error's context is a caf::message, read by CAF's generic code: it
  // fails on a type this node does not know, and throws on some malformed
  // values (a config_value with an unknown type index: "invalid type
  // found"), which inside CAF's middleman would take the node down. Either
  // way the message still arrives, carrying an error that says so: dropped,
  // it took its batch with it, their credit and a requester's answer.
  caf::error failure;
  try {
    failure = inner(error);
  } catch (...) {
    failure = caf::make_error(errc::decode_failed,
                              serializers::detail::current_exception_text());
  }
  if (!failure && inner.remaining() != 0)
    failure = caf::make_error(errc::decode_failed,
                              std::to_string(inner.remaining())
                                + " bytes after the error");
  if (failure)
    error = caf::make_error(
      errc::decode_failed,
      "the peer sent an error this node cannot read ("
        + caf::to_string(failure)
        + "); register the types of its context on both nodes");
  return caf::none;
}

// -- landing_buffer -----------------------------------------------------------

landing_buffer::landing_buffer(uint64_t size) {
  buf_ = serializers::detail::take_vector_unwritten<std::byte>(size);
  if (buf_.capacity() >= size) {
    // Already faulted in as far as it was written: that part counts as
    // prepared (shrinking writes nothing).
    if (buf_.size() > size)
      buf_.resize(size);
    return;
  }
  buf_.reserve(size);
  serializers::detail::advise_huge_pages(buf_.data(), size);
}

void landing_buffer::prepare(uint64_t end) {
  std::lock_guard<std::mutex> guard{mtx_};
  // Zero-filled ahead of the chunk (the puller prepares a chunk as it asks
  // for it): the fault happens here, not in the BASP worker's copy, and
  // never for bytes no chunk was asked for. Within the reserved capacity, so
  // the bytes never move under a landing chunk.
  if (!object_ && end > buf_.size() && end <= buf_.capacity())
    buf_.resize(end);
}

landing_buffer::landing_buffer(store::object_builder object)
  : object_(std::move(object)) {
  // nop
}

bool landing_buffer::land(uint64_t offset, std::span<const std::byte> bytes) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto frame = target();
  if (offset > frame.size() || bytes.size() > frame.size() - offset)
    return false;
  if (!bytes.empty())
    std::memcpy(frame.data() + offset, bytes.data(), bytes.size());
  return true;
}

std::vector<std::byte> landing_buffer::take() {
  std::lock_guard<std::mutex> guard{mtx_};
  auto out = std::move(buf_);
  buf_ = {};
  return out;
}

caf::expected<store::object_ref> landing_buffer::seal() {
  std::lock_guard<std::mutex> guard{mtx_};
  if (!object_)
    return caf::make_error(errc::transfer_failed,
                           "a pulled store handle landed in memory, not in "
                           "a store object");
  return object_.seal();
}

// -- landings -----------------------------------------------------------------

namespace {

struct landing {
  std::weak_ptr<landing_buffer> target;
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct landing_registry {
  std::mutex mtx;
  std::unordered_map<uint64_t, landing> entries;
  std::random_device random;
};

landing_registry& landings() {
  // Never destroyed: BASP workers may read chunk replies while the process
  // exits.
  static auto* registry = new landing_registry;
  return *registry;
}

/// Takes the landing `key` if it is registered for `length` bytes.
std::optional<landing> claim_landing(uint64_t key, uint64_t length) {
  auto& reg = landings();
  std::lock_guard<std::mutex> guard{reg.mtx};
  auto i = reg.entries.find(key);
  if (i == reg.entries.end() || i->second.length != length)
    return std::nullopt;
  auto result = std::move(i->second);
  reg.entries.erase(i);
  return result;
}

} // namespace

uint64_t register_landing(std::weak_ptr<landing_buffer> target,
                          uint64_t offset, uint64_t length) {
  auto& reg = landings();
  std::lock_guard<std::mutex> guard{reg.mtx};
  uint64_t key = 0;
  while (key == 0 || reg.entries.contains(key))
    key = (uint64_t{reg.random()} << 32) | reg.random();
  reg.entries.emplace(key, landing{std::move(target), offset, length});
  return key;
}

void release_landing(uint64_t key) {
  auto& reg = landings();
  std::lock_guard<std::mutex> guard{reg.mtx};
  reg.entries.erase(key);
}

// -- chunk_reply --------------------------------------------------------------

caf::error chunk_reply::save(caf::serializer& sink) const {
  if (auto err = sink(const_cast<uint64_t&>(landing)))
    return err;
  return data.save(sink);
}

namespace {

/// Copies the next `n` bytes of `source` straight into the landing `key`
/// when it is registered for `n` bytes and its frame is still wanted.
bool land_in_place(caf::binary_deserializer& source, uint64_t key,
                   uint64_t n) {
  auto place = claim_landing(key, n);
  if (!place)
    return false;
  auto target = place->target.lock();
  if (!target || !target->land(place->offset, next_bytes(source, n)))
    return false;
  source.skip(static_cast<size_t>(n));
  return true;
}

} // namespace

caf::error chunk_reply::load(caf::deserializer& source) {
  uint64_t n = 0;
  if (auto err = source(landing, n))
    return err;
  auto bin = dynamic_cast<caf::binary_deserializer*>(&source);
  landed = bin != nullptr && landing != 0 && n <= bin->remaining()
           && land_in_place(*bin, landing, n);
  if (!landed)
    return data.load_body(source, n);
  data = wire_bytes{};
  return caf::none;
}

} // namespace ferry::detail
