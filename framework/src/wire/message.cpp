// The flat encoding of wire_message and wire_batch (docs/wire-format.md).
//
//   u32 head length (CAF's integer encoding), then the head, little-endian:
//     u64 target, u64 sender, u64 mid, u64 token, u8 flags (bit 0: an error
//     follows), u32 element count, and per element
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
// adopt them without a copy. The data of an `inline_handle` frame lands in
// this host's store when the reading system has a read context
// (wire/read_context.hpp).
#include "wire/message.hpp"

#include "wire/read_context.hpp"

#include "ferry/errc.hpp"

#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/detail/little_endian.hpp"

#include <caf/binary_serializer.hpp>

#include <array>
#include <cstddef>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string>

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

/// Reads the error that follows a message whose flags say it has one.
caf::error load_error(caf::deserializer& source, caf::binary_deserializer& bin,
                      caf::error& error) {
  uint32_t length = 0;
  if (auto err = source(length))
    return err;
  if (length > bin.remaining())
    return malformed("an error of " + std::to_string(length) + " bytes ("
                     + std::to_string(bin.remaining()) + " bytes left)");
  caf::binary_deserializer inner{
    source.context(), reinterpret_cast<const char*>(bin.remainder().data()),
    length};
  bin.skip(length);
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

} // namespace

// -- wire_message -------------------------------------------------------------

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
  read_context* landing = nullptr;
  auto lands = [&](const wire_frame& frame, uint64_t data_size) {
    if (static_cast<frame_kind>(frame.kind) != frame_kind::inline_handle
        || data_size == 0 || data_size != frame.size)
      return false;
    if (!looked_up) {
      landing = read_context_of(source);
      looked_up = true;
    }
    return landing != nullptr;
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
  // their own. One allocation holds the small pieces and their reference
  // count.
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
      if (!lands(frame, data_size)) {
        read_piece(frame.data, data_size);
        continue;
      }
      auto landed = landing->land_import(next_bytes(*bin, data_size));
      if (landed.keep_alive) {
        bin->skip(static_cast<size_t>(data_size));
        frame.data = wire_bytes{landed.ref.bytes(),
                                std::move(landed.keep_alive)};
        imports.emplace_back(frame.object_id, std::move(landed.ref));
      } else {
        // Not landed: a buffer of its own (the shared one has no room for
        // it); decoding copies it into the store.
        frame.data = wire_bytes::take_from(*bin, data_size);
      }
    }
  }
  error = caf::error{};
  if ((flags & has_error_flag) == 0)
    return caf::none;
  return load_error(source, *bin, error);
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

// -- sizes --------------------------------------------------------------------

bool has_pulled_frames(const wire_message& msg) {
  for (auto& element : msg.elements)
    for (auto& frame : element.frames)
      if (is_pulled(static_cast<frame_kind>(frame.kind)))
        return true;
  return false;
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
      result = add(result, add(frame_bytes(frame), wire_frame_overhead));
  }
  return result;
}

} // namespace ferry::detail
