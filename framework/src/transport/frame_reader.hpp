// frame_reader: turns the bytes of a connection into frames, putting large
// ones straight where they belong.
//
// A connection's reader (transport/connection.hpp) asks for `buffer()`,
// reads into it, and hands the count to `consume`, which parses what came
// and calls the `frame_sink`. Most frames collect in the reader's receive
// buffer and reach the sink as a whole body (`on_frame`), parsed in place
// when the buffer holds them whole. Two kinds are read piece by piece
// instead, when longer than the receive buffer:
//
// - a `message` frame: its head is read and checked first
//   (wire/message.hpp), then each piece into the buffer it ends in, so a
//   large payload frame goes from the socket into the vector the decoder
//   adopts, and an inline store handle into its store object;
// - a `chunk` frame (the answer to a chunk or relay request): its request
//   id first, then the bytes straight into the place the sink names for
//   that request (the frame being pulled), or into a buffer of their own.
//
// While a piece's place has room for at least `direct_read_min` more bytes
// and the receive buffer is empty, `buffer()` is that place: the socket's
// bytes land there without a copy through the receive buffer.
//
// Every frame's length is checked against the sink's bound for its type
// before a byte of its body is kept, and a collected body grows only as its
// bytes arrive: a peer's claims cost nothing until it sends the bytes.
// A frame that breaks the rules makes `consume` return an error naming what
// was wrong, and the connection closes.
//
// The same parser reads a same-host lane's records, which hold one frame
// each (`read_record`).
//
// Thread-safety: one reader per object (the connection's I/O thread).
#pragma once

#include "wire/bytes.hpp"
#include "wire/frame.hpp"
#include "wire/message.hpp"

#include <caf/error.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace ferry::detail::net {

/// Where a chunk's bytes land, and what keeps that place alive.
struct chunk_place {
  std::span<std::byte> bytes;
  std::shared_ptr<void> keep_alive;
};

/// What a frame_reader reports.
class frame_sink {
public:
  virtual ~frame_sink();

  /// Returns the longest body taken of a frame of `type` now (0: none).
  virtual uint64_t max_body(wire::frame_type type) const = 0;

  /// Takes a frame's whole body (any type but `message` and `chunk`).
  [[nodiscard]] virtual caf::error
  on_frame(wire::frame_type type, std::span<const std::byte> body) = 0;

  /// Takes a `message` frame.
  [[nodiscard]] virtual caf::error on_message(wire_message&& msg) = 0;

  /// Returns where the `length` bytes answering `request` land (empty: in
  /// a buffer of their own).
  virtual chunk_place chunk_landing(uint64_t request, uint64_t length) = 0;

  /// Takes a `chunk` frame: its bytes landed in `chunk_landing`'s place
  /// (`landed`), else they are `data`.
  [[nodiscard]] virtual caf::error on_chunk(uint64_t request, wire_bytes data,
                                            bool landed) = 0;

  /// Returns where inline store handles land (null: nowhere).
  virtual import_landing* imports() = 0;
};

class frame_reader {
public:
  /// Bytes of the receive buffer.
  static constexpr size_t buffer_size = 256 * 1024;

  /// A place with at least this much room left is read into directly.
  static constexpr size_t direct_read_min = 16 * 1024;

  /// Reads a connection, which begins with the preface when `preface`.
  explicit frame_reader(bool preface = true);

  /// Returns where the next bytes read go.
  std::span<std::byte> buffer();

  /// `n` bytes went into `buffer()`: parses them, calling `sink`.
  [[nodiscard]] caf::error consume(size_t n, frame_sink& sink);

  /// Returns whether the reader is between frames (nothing partly read).
  bool idle() const;

  /// Reads `record`, one frame (a same-host lane's record), calling `sink`.
  [[nodiscard]] static caf::error read_record(std::span<const std::byte> record,
                                              frame_sink& sink);

private:
  enum class state : uint8_t {
    preface,
    header,
    body,
    message_head_length,
    message_head,
    message_pieces,
    message_tail,
    chunk_request_id,
    chunk_data,
  };

  /// Parses what the receive buffer holds; stops when it needs more.
  caf::error process(frame_sink& sink);

  /// Handles a header: picks how its body is read.
  caf::error on_header(frame_sink& sink);

  /// Reads one whole frame (see `read_record`).
  static caf::error read_whole(std::span<const std::byte> record,
                               frame_sink& sink);

  /// Handles a whole body (the frame's type in `header_`).
  static caf::error dispatch(const wire::frame_header& header,
                             std::span<const std::byte> body, frame_sink& sink);

  /// Copies up to `dst.size()` bytes from the receive buffer; returns how
  /// many.
  size_t take(std::span<std::byte> dst);

  /// Collects `n` bytes into `collect_` (from the receive buffer); returns
  /// the collected bytes once they are all there.
  std::optional<std::span<const std::byte>> gather(size_t n);

  /// Returns where a piece being read directly goes, if any.
  std::span<std::byte> direct_place();

  /// The piece being read directly received `n` bytes.
  caf::error direct_filled(size_t n, frame_sink& sink);

  /// Ends the current message frame.
  caf::error end_message(frame_sink& sink, std::span<const std::byte> tail);

  /// Ends the current chunk frame.
  caf::error end_chunk(frame_sink& sink);

  size_t available() const { return end_ - begin_; }

  /// The receive buffer, left uninitialised: its pages take memory only as
  /// the socket's bytes reach them, so a silent connection costs little.
  std::unique_ptr<std::byte[]> buf_;
  size_t begin_ = 0;
  size_t end_ = 0;
  state state_;
  wire::frame_header header_;
  /// Body bytes read of the current frame (streamed kinds).
  uint64_t body_read_ = 0;
  /// A body or head collected across reads.
  std::vector<std::byte> collect_;
  /// The last `buffer()` was a direct place.
  bool direct_ = false;
  // Streamed message frames.
  uint32_t head_length_ = 0;
  std::unique_ptr<message_reader> message_;
  // Streamed chunk frames.
  uint64_t request_ = 0;
  chunk_place landing_;
  /// Where a chunk that lands nowhere goes (memory as its bytes arrive).
  std::optional<filling_buffer> chunk_own_;
  uint64_t chunk_length_ = 0;
  uint64_t chunk_done_ = 0;

  /// Returns where the current chunk's next bytes go.
  std::span<std::byte> chunk_room();
};

} // namespace ferry::detail::net
