// wire_message and wire_batch: their bodies, written and read (see
// wire/message.hpp and docs/wire-format.md).
#include "wire/message.hpp"

#include "ferry/errc.hpp"

#include <cstring>
#include <limits>
#include <string>

namespace ferry::detail {

namespace {

constexpr size_t fixed_head = 8 + 8 + 8 + 1 + 4;
constexpr size_t element_head = 4 + 4;
constexpr size_t frame_head = 1 + 8 + 8 + 8 + 8;
constexpr uint8_t has_error_flag = 1;
// Pieces at least this large are read into buffers of their own.
constexpr uint64_t own_buffer_threshold = 64 * 1024;

caf::error malformed(const std::string& what) {
  return caf::make_error(errc::decode_failed,
                         "malformed message frame from the peer: " + what);
}

size_t head_size(const wire_message& msg) {
  size_t frames = 0;
  for (auto& element : msg.elements)
    frames += element.frames.size();
  return fixed_head + msg.elements.size() * element_head + frames * frame_head;
}

} // namespace

import_landing::~import_landing() = default;

// -- writing ------------------------------------------------------------------

void write_message(wire::out_frame& out, const wire_message& msg) {
  auto w = out.fields();
  w.le32(static_cast<uint32_t>(head_size(msg)));
  w.le64(msg.target);
  w.le64(msg.sender);
  w.le64(msg.mid);
  w.u8(msg.error ? has_error_flag : 0);
  w.le32(static_cast<uint32_t>(msg.elements.size()));
  for (auto& element : msg.elements) {
    w.le32(static_cast<uint32_t>(element.header.size()));
    w.le32(static_cast<uint32_t>(element.frames.size()));
    for (auto& frame : element.frames) {
      w.u8(frame.kind);
      w.le64(frame.size);
      w.le64(frame.object_id);
      w.le64(frame.ticket);
      w.le64(frame.data.size());
    }
  }
  for (auto& element : msg.elements) {
    out.append(element.header.bytes(), element.header.keep_alive());
    for (auto& frame : element.frames)
      out.append(frame.data.bytes(), frame.data.keep_alive());
  }
  if (msg.error) {
    auto tail = out.fields();
    tail.error(msg.error);
  }
}

wire::out_frame message_frame(const wire_message& msg) {
  wire::out_frame result{wire::frame_type::message};
  write_message(result, msg);
  result.finish();
  return result;
}

wire::out_frame batch_frame(const std::vector<wire_message>& msgs) {
  wire::out_frame result{wire::frame_type::batch};
  result.fields().le32(static_cast<uint32_t>(msgs.size()));
  for (auto& msg : msgs)
    write_message(result, msg);
  result.finish();
  return result;
}

// -- message_reader -----------------------------------------------------------

caf::error message_reader::start(std::span<const std::byte> head, uint64_t left,
                                 import_landing* landing) {
  landing_ = landing;
  wire::reader r{head, "message head"};
  msg_.target = r.le64();
  msg_.sender = r.le64();
  msg_.mid = r.le64();
  auto flags = r.u8();
  auto element_count = r.le32();
  if (!r.ok())
    return malformed("a head of " + std::to_string(head.size()) + " bytes");
  if ((flags & ~has_error_flag) != 0)
    return malformed("flags " + std::to_string(flags));
  has_error_ = (flags & has_error_flag) != 0;
  if (element_count > r.remaining() / element_head)
    return malformed(std::to_string(element_count) +
                     " elements in a head that holds fewer");
  // Counts and lengths, checked before anything is allocated for a piece.
  uint64_t shared_total = 0;
  auto count = [&](uint64_t length, piece_slot slot) -> bool {
    if (length > left - total_)
      return false;
    total_ += length;
    slot.length = length;
    if (slot.into == piece_slot::target::shared) {
      if (length >= own_buffer_threshold)
        slot.into = piece_slot::target::own;
      else
        shared_total += length;
    }
    slots_.push_back(slot);
    return true;
  };
  msg_.elements.resize(element_count);
  for (uint32_t e = 0; e < element_count; ++e) {
    auto header_size = r.le32();
    auto frame_count = r.le32();
    if (!r.ok() || frame_count > r.remaining() / frame_head)
      return malformed("element " + std::to_string(e) + " claims " +
                       std::to_string(frame_count) +
                       " frames, more than its head holds");
    if (!count(header_size, piece_slot{e, -1, 0, piece_slot::target::shared}))
      return malformed("element " + std::to_string(e) + " claims a header of " +
                       std::to_string(header_size) +
                       " bytes, more than the frame holds");
    auto& frames = msg_.elements[e].frames;
    frames.resize(frame_count);
    for (uint32_t f = 0; f < frame_count; ++f) {
      auto& frame = frames[f];
      frame.kind = r.u8();
      frame.size = r.le64();
      frame.object_id = r.le64();
      frame.ticket = r.le64();
      auto data_size = r.le64();
      auto lands =
        landing != nullptr && data_size > 0 && data_size == frame.size &&
        static_cast<frame_kind>(frame.kind) == frame_kind::inline_handle;
      piece_slot slot{e, static_cast<int32_t>(f), 0,
                      lands ? piece_slot::target::import
                            : piece_slot::target::shared};
      if (!count(data_size, slot))
        return malformed("frame " + std::to_string(f) + " of element " +
                         std::to_string(e) + " claims " +
                         std::to_string(data_size) +
                         " bytes, more than the frame holds");
    }
  }
  if (r.remaining() != 0)
    return malformed(std::to_string(r.remaining()) + " bytes after the head");
  // One allocation holds the small pieces and their reference count.
  if (shared_total > 0)
    shared_ = std::make_shared_for_overwrite<std::byte[]>(shared_total);
  current_ = 0;
  if (!slots_.empty())
    open_piece();
  return caf::none;
}

void message_reader::open_piece() {
  // Pieces of no bytes open and close at once.
  while (current_ < slots_.size()) {
    auto& slot = slots_[current_];
    done_ = 0;
    if (slot.length == 0) {
      close_piece();
      ++current_;
      continue;
    }
    auto n = static_cast<size_t>(slot.length);
    if (slot.into == piece_slot::target::import) {
      import_ = landing_->begin(slot.length);
      if (import_) {
        where_ = import_->object.bytes();
        return;
      }
      slot.into = piece_slot::target::own;
    }
    if (slot.into == piece_slot::target::own) {
      // Memory follows the bytes that arrive, not the length claimed.
      own_.emplace(n);
      where_ = {};
    } else {
      where_ = {shared_.get() + shared_used_, n};
      shared_used_ += n;
    }
    return;
  }
  where_ = {};
  done_ = 0;
}

void message_reader::close_piece() {
  auto& slot = slots_[current_];
  auto& element = msg_.elements[slot.element];
  auto& bytes =
    slot.frame < 0 ? element.header : element.frames[slot.frame].data;
  if (slot.length == 0) {
    bytes = wire_bytes{};
    return;
  }
  switch (slot.into) {
  case piece_slot::target::shared:
    bytes = wire_bytes{where_, shared_};
    break;
  case piece_slot::target::own:
    bytes = wire_bytes{own_->take()};
    own_.reset();
    break;
  case piece_slot::target::import: {
    auto& frame = element.frames[slot.frame];
    auto landed = landing_->seal(std::move(*import_));
    import_.reset();
    // Sealing fails only with the store itself; the frame then arrives
    // without data and decoding refuses the message, naming the frame.
    if (landed.keep_alive) {
      bytes = wire_bytes{landed.ref.bytes(), std::move(landed.keep_alive)};
      msg_.imports.emplace_back(frame.object_id, std::move(landed.ref));
    } else {
      bytes = wire_bytes{};
    }
    break;
  }
  }
}

std::span<std::byte> message_reader::place() {
  if (current_ >= slots_.size())
    return {};
  if (own_)
    return own_->room();
  return where_.subspan(static_cast<size_t>(done_));
}

void message_reader::filled(size_t n) {
  done_ += n;
  if (own_)
    own_->filled(n);
  if (done_ < slots_[current_].length)
    return;
  close_piece();
  ++current_;
  open_piece();
}

void message_reader::finish(wire_message& out) {
  out = std::move(msg_);
  msg_ = wire_message{};
}

caf::error read_message(wire::reader& in, wire_message& out,
                        import_landing* landing) {
  auto head_length = in.le32();
  if (!in.ok() || head_length > max_head || head_length > in.remaining())
    return malformed("a head of " + std::to_string(head_length) + " bytes (" +
                     std::to_string(in.remaining()) + " bytes left)");
  auto head = in.bytes(head_length);
  message_reader body;
  if (auto err = body.start(head, in.remaining(), landing))
    return err;
  for (auto where = body.place(); !where.empty(); where = body.place()) {
    auto from = in.bytes(where.size());
    std::memcpy(where.data(), from.data(), from.size());
    body.filled(where.size());
  }
  body.finish(out);
  if (body.has_error()) {
    out.error = in.error();
    if (!in.ok())
      return in.failure();
    if (!out.error)
      return malformed("an error flag without an error");
  }
  return caf::none;
}

caf::error read_batch(wire::reader& in, wire_batch& out,
                      import_landing* landing) {
  auto count = in.le32();
  if (count > max_batch_messages)
    return caf::make_error(
      errc::decode_failed,
      "malformed batch frame from the peer: " + std::to_string(count) +
        " messages, more than a batch holds (" +
        std::to_string(max_batch_messages) + ")");
  // Each message takes at least its head length and fixed head.
  if (count > in.remaining() / (4 + fixed_head))
    return caf::make_error(
      errc::decode_failed,
      "malformed batch frame from the peer: " + std::to_string(count) +
        " messages in " + std::to_string(in.remaining()) + " bytes");
  out.messages.clear();
  out.messages.resize(count);
  for (auto& msg : out.messages)
    if (auto err = read_message(in, msg, landing))
      return err;
  return in.finish();
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
