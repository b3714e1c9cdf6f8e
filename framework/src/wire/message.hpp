// wire_message and wire_batch: user messages on their way between nodes.
//
// A `wire_message` carries one user message: its target and sender actor
// ids, CAF's message id (requests and responses keep CAF's semantics), and
// per element the payload header a family wrote and its frames. A
// `message` frame carries one; a `batch` frame carries small messages sent
// in a burst. The body of a message, little-endian (docs/wire-format.md):
//
//   le32 head length, then the head:
//     le64 target, le64 sender, le64 mid, u8 flags (bit 0: an error
//     follows), le32 element count, and per element
//       le32 header length, le32 frame count, and per frame
//         u8 kind, le64 size, le64 object id, le64 ticket, le64 data length;
//   then every element's header bytes and its frames' data bytes, in order
//   (the *pieces*);
//   then, if flag bit 0 is set, the error (wire/codec.hpp).
//
// A batch's body is a `le32` count, then that many message bodies.
//
// Reading treats bytes as hostile: the head is checked whole (every count
// against what the head can hold, the sum of all lengths against the bytes
// the frame has left) before anything is allocated for a piece.
// `message_reader` then hands out the place of each piece in turn, so a
// reader of a connection can receive a large piece straight into its final
// buffer (transport/frame_reader.hpp), and one of a ring record or a small
// frame copies it from memory (`read_message`). Small pieces share one
// buffer; pieces of 64 KiB or more get buffers of their own, which
// decoders adopt (a `raw` `std::vector<std::byte>` takes its buffer over).
// The data of an `inline_handle` frame lands in this host's store when the
// reader has an `import_landing` that takes it.
//
// Thread-safety: value types; distinct objects may be used by distinct
// threads.
#pragma once

#include "wire/bytes.hpp"
#include "wire/codec.hpp"
#include "wire/out_frame.hpp"
#include "wire/protocol.hpp"

#include "ferry/store/object_builder.hpp"
#include "ferry/store/object_ref.hpp"

#include <caf/error.hpp>

#include <boost/container/small_vector.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace ferry::detail {

/// One frame of an encoded element.
struct wire_frame {
  /// A `frame_kind`.
  uint8_t kind = 0;
  /// The bytes the frame decodes to (inline kinds: checked against `data`).
  uint64_t size = 0;
  /// The store object of `store_object`, `remote_handle`, `inline_handle`.
  uint64_t object_id = 0;
  /// The store ticket (`store_object`) or transfer id (pulled kinds).
  uint64_t ticket = 0;
  /// The bytes of inline kinds (empty for the others).
  wire_bytes data;
};

/// Sequences that almost always hold one item (one element per message, one
/// frame per small element) keep it inline: the small messages that dominate
/// round trips then allocate no vector on either side.
template <class T>
using inline_one = boost::container::small_vector<T, 1>;

/// One message element: the payload header (ferry's fixed header codec) and
/// its frames.
struct wire_element {
  wire_bytes header;
  inline_one<wire_frame> frames;
};

/// A user message on its way to an actor on the receiving node.
struct wire_message {
  /// Actor id on the receiving node.
  uint64_t target = 0;
  /// Actor id of the sender on the sending node (0: anonymous).
  uint64_t sender = 0;
  /// `caf::message_id` value: requests and responses keep CAF's semantics.
  uint64_t mid = 0;
  /// Set for error responses (the content is then this error alone).
  caf::error error;
  /// The encoded elements.
  inline_one<wire_element> elements;
  /// Receiving side only, never on the wire: local copies of the sender's
  /// store objects (sender's object id, copy). `remote_handle` frames are
  /// filled in by the puller before the message is decoded; `inline_handle`
  /// frames by the reader when its import landing took them (the frame's
  /// `data` is then a view of the copy), else by decoding.
  std::vector<std::pair<uint64_t, store::object_ref>> imports;
};

/// Small wire messages a link sent in a burst, in order, as one frame.
struct wire_batch {
  std::vector<wire_message> messages;
};

/// An object of this host's store that a wire message's bytes landed in.
struct landed_import {
  /// The sealed object.
  store::object_ref ref;
  /// Keeps the object counted against the landing budget until the frame
  /// viewing it is gone; null when nothing landed.
  std::shared_ptr<const void> keep_alive;
};

/// Where the bytes of `inline_handle` frames land: new objects of this
/// host's store, within a budget (node/landings.hpp).
class import_landing {
public:
  /// An object being filled, and its share of the budget.
  struct place {
    store::object_builder object;
    std::shared_ptr<const void> keep_alive;
  };

  virtual ~import_landing();

  /// Returns a new object of `size` bytes to fill, or nothing when the
  /// store cannot or should not take it now (the frame is then read into
  /// memory and decoding copies it into the store).
  virtual std::optional<place> begin(uint64_t size) = 0;

  /// Seals a filled object; an empty result when sealing failed.
  virtual landed_import seal(place&& filled) = 0;
};

// -- writing ------------------------------------------------------------------

/// Appends the body of `msg` to `out`: its head as fields, its pieces
/// copied or viewed (wire/out_frame.hpp).
void write_message(wire::out_frame& out, const wire_message& msg);

/// Returns a finished `message` frame holding `msg`.
wire::out_frame message_frame(const wire_message& msg);

/// Returns a finished `batch` frame holding `msgs`.
wire::out_frame batch_frame(const std::vector<wire_message>& msgs);

// -- reading ------------------------------------------------------------------

/// Largest message head: one element of 4096 frames.
inline constexpr uint32_t max_head = 29 + 8 + 4096 * 33;

/// Reads one message body piece by piece (see the file comment).
class message_reader {
public:
  /// Reads the message whose head is `head` (the bytes after the head
  /// length); `left` is what the frame holds after the head. Checks the
  /// head whole; fails with `errc::decode_failed` naming what is wrong.
  [[nodiscard]] caf::error start(std::span<const std::byte> head, uint64_t left,
                                 import_landing* landing);

  /// Returns where the next bytes of the current piece go (empty once every
  /// piece is in).
  std::span<std::byte> place();

  /// `n` bytes went into `place()`.
  void filled(size_t n);

  /// Returns whether an error follows the pieces (flag bit 0).
  bool has_error() const { return has_error_; }

  /// Returns the bytes of all pieces.
  uint64_t pieces_total() const { return total_; }

  /// Moves the message out, once every piece is in (`place()` is empty);
  /// the caller reads the error, if any, into it.
  void finish(wire_message& out);

private:
  struct piece_slot {
    /// Element, and frame within it (-1: the element's header).
    uint32_t element = 0;
    int32_t frame = -1;
    uint64_t length = 0;
    /// Where the bytes go: the shared buffer, a buffer of its own, or a
    /// store object.
    enum class target : uint8_t { shared, own, import } into = target::shared;
  };

  /// Makes the current piece's buffer.
  void open_piece();

  /// Stores the current piece's bytes in the message.
  void close_piece();

  wire_message msg_;
  /// One element of one frame makes two pieces: most messages allocate no
  /// vector for them.
  boost::container::small_vector<piece_slot, 4> slots_;
  size_t current_ = 0;
  uint64_t done_ = 0;
  std::span<std::byte> where_;
  std::shared_ptr<std::byte[]> shared_;
  size_t shared_used_ = 0;
  std::optional<filling_buffer> own_;
  std::optional<import_landing::place> import_;
  import_landing* landing_ = nullptr;
  bool has_error_ = false;
  uint64_t total_ = 0;
};

/// Reads a message body from `in` (consumed to the message's end).
[[nodiscard]] caf::error read_message(wire::reader& in, wire_message& out,
                                      import_landing* landing);

/// Reads a batch body from `in` (the whole of it).
[[nodiscard]] caf::error read_batch(wire::reader& in, wire_batch& out,
                                    import_landing* landing);

// -- sizes --------------------------------------------------------------------

/// Returns whether `msg` has frames the receiver must pull first.
bool has_pulled_frames(const wire_message& msg);

/// Returns the bytes `frame` counts as: what it decodes to, whether it
/// travels inline, compressed, in the store or by pull.
uint64_t frame_bytes(const wire_frame& frame);

/// Returns the bytes `msg` counts against a credit window (both nodes
/// compute the same figure; saturates at a peer's wild claims).
uint64_t wire_size(const wire_message& msg);

} // namespace ferry::detail
