// frame_reader: parsing a connection's bytes into frames (see
// transport/frame_reader.hpp and docs/wire-format.md).
#include "transport/frame_reader.hpp"

#include "wire/codec.hpp"

#include "ferry/errc.hpp"

#include "ferry/serializers/detail/little_endian.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace ferry::detail::net {

namespace {

using serializers::detail::get_le;
using wire::frame_type;

/// Most bytes after a message's pieces (its error).
constexpr uint64_t max_message_tail = 64 * 1024;

caf::error broken(const std::string& what) {
  return caf::make_error(errc::decode_failed,
                         "the peer broke ferry's framing: " + what);
}

std::string hex_of(std::span<const std::byte> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string result;
  for (auto b : bytes) {
    auto x = static_cast<unsigned>(b);
    if (!result.empty())
      result += ' ';
    result += digits[x >> 4];
    result += digits[x & 15];
  }
  return result;
}

} // namespace

frame_sink::~frame_sink() = default;

frame_reader::frame_reader(bool preface)
  : buf_(new std::byte[buffer_size]),
    state_(preface ? state::preface : state::header) {
  // nop
}

bool frame_reader::idle() const {
  return state_ == state::header && available() == 0;
}

std::span<std::byte> frame_reader::direct_place() {
  switch (state_) {
  case state::message_pieces:
    return message_->place();
  case state::chunk_data:
    return chunk_room();
  default:
    return {};
  }
}

std::span<std::byte> frame_reader::chunk_room() {
  if (chunk_own_)
    return chunk_own_->room();
  return landing_.bytes.subspan(static_cast<size_t>(chunk_done_));
}

std::span<std::byte> frame_reader::buffer() {
  if (available() == 0) {
    begin_ = end_ = 0;
    auto place = direct_place();
    if (place.size() >= direct_read_min) {
      direct_ = true;
      return place;
    }
  }
  direct_ = false;
  // Room at the end: a body collected in the buffer needs it whole, and
  // reads should not shrink to slivers.
  auto wanted = state_ == state::body ? header_.length : direct_read_min;
  if (begin_ > 0 && buffer_size - begin_ < wanted + direct_read_min) {
    std::memmove(buf_.get(), buf_.get() + begin_, available());
    end_ -= begin_;
    begin_ = 0;
  }
  return {buf_.get() + end_, buffer_size - end_};
}

caf::error frame_reader::consume(size_t n, frame_sink& sink) {
  // What a peer may claim is bounded (`max_body`), but the address space
  // for it may still be missing: that ends the connection, not the node.
  try {
    if (direct_) {
      direct_ = false;
      return direct_filled(n, sink);
    }
    end_ += n;
    return process(sink);
  } catch (const std::exception& e) {
    return caf::make_error(errc::decode_failed,
                           std::string{"cannot take the peer's frame: "} +
                             e.what());
  }
}

caf::error frame_reader::direct_filled(size_t n, frame_sink& sink) {
  body_read_ += n;
  if (state_ == state::message_pieces) {
    message_->filled(n);
  } else {
    chunk_done_ += n;
    if (chunk_own_)
      chunk_own_->filled(n);
    if (chunk_done_ == chunk_length_)
      if (auto err = end_chunk(sink))
        return err;
  }
  return process(sink);
}

size_t frame_reader::take(std::span<std::byte> dst) {
  auto n = std::min(dst.size(), available());
  std::memcpy(dst.data(), buf_.get() + begin_, n);
  begin_ += n;
  return n;
}

std::optional<std::span<const std::byte>> frame_reader::gather(size_t n) {
  if (collect_.empty() && available() >= n) {
    std::span<const std::byte> result{buf_.get() + begin_, n};
    begin_ += n;
    return result;
  }
  auto k = std::min(n - collect_.size(), available());
  collect_.insert(collect_.end(), buf_.get() + begin_, buf_.get() + begin_ + k);
  begin_ += k;
  if (collect_.size() < n)
    return std::nullopt;
  return std::span<const std::byte>{collect_};
}

caf::error frame_reader::on_header(frame_sink& sink) {
  auto limit = sink.max_body(header_.type);
  if (header_.length > limit)
    return broken(std::string{"a "} + wire::name_of(header_.type) +
                  " frame of " + std::to_string(header_.length) +
                  " bytes, above the " + std::to_string(limit) +
                  " the connection takes of that type now");
  collect_.clear();
  if (collect_.capacity() > buffer_size)
    collect_.shrink_to_fit();
  body_read_ = 0;
  if (header_.type == frame_type::message && header_.length > buffer_size) {
    state_ = state::message_head_length;
  } else if (header_.type == frame_type::chunk &&
             header_.length > buffer_size) {
    state_ = state::chunk_request_id;
  } else {
    state_ = state::body;
  }
  return caf::none;
}

caf::error frame_reader::dispatch(const wire::frame_header& header,
                                  std::span<const std::byte> body,
                                  frame_sink& sink) {
  switch (header.type) {
  case frame_type::message: {
    wire::reader in{body, "message frame"};
    wire_message msg;
    if (auto err = read_message(in, msg, sink.imports()))
      return err;
    if (auto err = in.finish())
      return err;
    return sink.on_message(std::move(msg));
  }
  case frame_type::chunk: {
    if (body.size() < wire::chunk_prefix)
      return broken("a chunk frame of " + std::to_string(body.size()) +
                    " bytes, shorter than its request id");
    auto request = get_le(body.data(), 8);
    auto data = body.subspan(wire::chunk_prefix);
    auto place = sink.chunk_landing(request, data.size());
    if (place.keep_alive && place.bytes.size() == data.size()) {
      if (!data.empty())
        std::memcpy(place.bytes.data(), data.data(), data.size());
      return sink.on_chunk(request, wire_bytes{}, true);
    }
    return sink.on_chunk(request, wire_bytes::copy_of(data), false);
  }
  default:
    return sink.on_frame(header.type, body);
  }
}

caf::error frame_reader::end_message(frame_sink& sink,
                                     std::span<const std::byte> tail) {
  wire_message msg;
  message_->finish(msg);
  auto with_error = message_->has_error();
  message_.reset();
  state_ = state::header;
  if (with_error) {
    wire::reader in{tail, "message frame's error"};
    msg.error = in.error();
    if (auto err = in.finish())
      return err;
    if (!msg.error)
      return broken("a message frame with an error flag but no error");
  }
  return sink.on_message(std::move(msg));
}

caf::error frame_reader::end_chunk(frame_sink& sink) {
  state_ = state::header;
  auto landed = !chunk_own_.has_value();
  wire_bytes data;
  if (chunk_own_)
    data = wire_bytes{chunk_own_->take()};
  chunk_own_.reset();
  landing_ = {};
  return sink.on_chunk(request_, std::move(data), landed);
}

caf::error frame_reader::process(frame_sink& sink) {
  for (;;) {
    switch (state_) {
    case state::preface: {
      if (available() < wire::preface.size())
        return caf::none;
      std::span<const std::byte> got{buf_.get() + begin_, wire::preface.size()};
      if (!std::equal(got.begin(), got.end(), wire::preface.begin())) {
        if (got[0] == std::byte{0x16})
          return broken("the peer speaks TLS (its first bytes are a TLS "
                        "handshake), and this connection is plain");
        return broken("the peer does not speak ferry's protocol (its "
                      "first bytes are " +
                      hex_of(got) + ", not \"FERRY/1\\n\")");
      }
      begin_ += wire::preface.size();
      state_ = state::header;
      break;
    }
    case state::header: {
      if (available() < wire::header_size)
        return caf::none;
      std::string why;
      auto header = wire::get_header(
        std::span<const std::byte, wire::header_size>{buf_.get() + begin_,
                                                      wire::header_size},
        why);
      if (!header)
        return broken(why);
      begin_ += wire::header_size;
      header_ = *header;
      if (auto err = on_header(sink))
        return err;
      break;
    }
    case state::body: {
      std::span<const std::byte> body;
      if (header_.length <= buffer_size) {
        // Kept in the receive buffer until whole, then read in place.
        if (available() < header_.length)
          return caf::none;
        body = {buf_.get() + begin_, static_cast<size_t>(header_.length)};
        begin_ += body.size();
      } else {
        auto whole = gather(static_cast<size_t>(header_.length));
        if (!whole)
          return caf::none;
        body = *whole;
      }
      state_ = state::header;
      if (auto err = dispatch(header_, body, sink))
        return err;
      break;
    }
    case state::message_head_length: {
      if (available() < 4)
        return caf::none;
      head_length_ = static_cast<uint32_t>(get_le(buf_.get() + begin_, 4));
      begin_ += 4;
      body_read_ = 4;
      if (head_length_ > max_head || head_length_ > header_.length - 4)
        return broken("a message head of " + std::to_string(head_length_) +
                      " bytes in a frame of " + std::to_string(header_.length));
      state_ = state::message_head;
      break;
    }
    case state::message_head: {
      auto head = gather(head_length_);
      if (!head)
        return caf::none;
      body_read_ += head_length_;
      message_ = std::make_unique<message_reader>();
      if (auto err =
            message_->start(*head, header_.length - body_read_, sink.imports()))
        return err;
      state_ = state::message_pieces;
      break;
    }
    case state::message_pieces: {
      auto place = message_->place();
      if (place.empty()) {
        auto tail = header_.length - body_read_;
        if (!message_->has_error()) {
          if (tail != 0)
            return broken(std::to_string(tail) +
                          " bytes after a message's pieces");
          if (auto err = end_message(sink, {}))
            return err;
          break;
        }
        if (tail == 0 || tail > max_message_tail)
          return broken("a message's error of " + std::to_string(tail) +
                        " bytes");
        collect_.clear();
        state_ = state::message_tail;
        break;
      }
      if (available() == 0)
        return caf::none;
      auto n = take(place);
      body_read_ += n;
      message_->filled(n);
      break;
    }
    case state::message_tail: {
      auto tail = gather(static_cast<size_t>(header_.length - body_read_));
      if (!tail)
        return caf::none;
      if (auto err = end_message(sink, *tail))
        return err;
      break;
    }
    case state::chunk_request_id: {
      if (available() < wire::chunk_prefix)
        return caf::none;
      request_ = get_le(buf_.get() + begin_, 8);
      begin_ += wire::chunk_prefix;
      body_read_ = wire::chunk_prefix;
      auto length = header_.length - wire::chunk_prefix;
      landing_ = sink.chunk_landing(request_, length);
      if (!landing_.keep_alive || landing_.bytes.size() != length) {
        landing_ = {};
        chunk_own_.emplace(static_cast<size_t>(length));
      }
      chunk_length_ = length;
      chunk_done_ = 0;
      state_ = state::chunk_data;
      break;
    }
    case state::chunk_data: {
      if (chunk_done_ == chunk_length_) {
        if (auto err = end_chunk(sink))
          return err;
        break;
      }
      if (available() == 0)
        return caf::none;
      auto n = take(chunk_room());
      chunk_done_ += n;
      if (chunk_own_)
        chunk_own_->filled(n);
      body_read_ += n;
      break;
    }
    }
  }
}

caf::error frame_reader::read_record(std::span<const std::byte> record,
                                     frame_sink& sink) {
  try {
    return read_whole(record, sink);
  } catch (const std::exception& e) {
    return caf::make_error(errc::decode_failed,
                           std::string{"cannot take the peer's record: "} +
                             e.what());
  }
}

caf::error frame_reader::read_whole(std::span<const std::byte> record,
                                    frame_sink& sink) {
  if (record.size() < wire::header_size)
    return broken("a record of " + std::to_string(record.size()) +
                  " bytes, shorter than a frame header");
  std::string why;
  auto header = wire::get_header(
    std::span<const std::byte, wire::header_size>{record.data(),
                                                  wire::header_size},
    why);
  if (!header)
    return broken(why);
  auto body = record.subspan(wire::header_size);
  if (header->length != body.size())
    return broken("a record whose frame claims " +
                  std::to_string(header->length) + " bytes of body but holds " +
                  std::to_string(body.size()));
  auto limit = sink.max_body(header->type);
  if (header->length > limit)
    return broken(std::string{"a "} + wire::name_of(header->type) +
                  " frame of " + std::to_string(header->length) +
                  " bytes, above the " + std::to_string(limit) +
                  " the link takes of that type");
  return dispatch(*header, body, sink);
}

} // namespace ferry::detail::net
