// ferry's frame reader fed hostile bytes (white-box:
// framework/src/transport/frame_reader): frame headers of length 0, 2^32
// and 2^63, of an unknown type, with flags set, over the bound its sink
// sets for the type; message frames whose head claims more than the frame
// holds, with an error flag but no error, or bytes after the message, both
// on the path that reads a frame whole and on the one that streams a large
// frame piece by piece; lane records that disagree with their frame header;
// and well-formed frames split at every byte boundary or several in one
// read. Every read ends with an error or whole values (the frames that
// were written), never a crash; a claim over the bound is refused at the
// header, before any byte of its body is kept, and one within it takes
// memory only as its bytes arrive.
#include "transport/frame_reader.hpp"
#include "wire/control.hpp"
#include "wire/frame.hpp"
#include "wire/message.hpp"
#include "wire/out_frame.hpp"

#include "ferry/errc.hpp"
#include "ferry/test/mentions.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace ferry::detail;
using ferry::test::mentions;

namespace {

/// Returns the body of `frame` (its bytes after the frame header).
std::vector<std::byte> body_of(const wire::out_frame& frame) {
  auto bytes = frame.flatten();
  return {bytes.begin() + wire::header_size, bytes.end()};
}

/// A frame header of any length, type number and flags.
std::vector<std::byte> header(uint64_t length, uint16_t type,
                              uint16_t flags = 0) {
  std::vector<std::byte> result(wire::header_size);
  for (size_t i = 0; i < 8; ++i)
    result[i] = static_cast<std::byte>(length >> (8 * i));
  result[8] = static_cast<std::byte>(type);
  result[9] = static_cast<std::byte>(type >> 8);
  result[10] = static_cast<std::byte>(flags);
  result[11] = static_cast<std::byte>(flags >> 8);
  return result;
}

uint16_t type_number(wire::frame_type type) {
  return static_cast<uint16_t>(type);
}

/// A frame as the reader reports it: its type and body (a message written
/// again, a chunk as its request id and bytes).
struct seen_frame {
  wire::frame_type type;
  std::vector<std::byte> body;
  friend bool operator==(const seen_frame&, const seen_frame&) = default;
};

/// Returns `frame` as a reader should report it.
seen_frame as_seen(const wire::out_frame& frame) {
  return {frame.type(), body_of(frame)};
}

/// Records every frame a reader reports, in order; takes bodies up to the
/// bound set for their type (`bounds`, else `default_bound`), like a
/// link's dispatcher (node/dispatch.cpp).
class recording_sink : public net::frame_sink {
public:
  uint64_t max_body(wire::frame_type type) const override {
    auto i = bounds.find(type);
    return i != bounds.end() ? i->second : default_bound;
  }

  caf::error on_frame(wire::frame_type type,
                      std::span<const std::byte> body) override {
    seen.push_back({type, {body.begin(), body.end()}});
    return caf::none;
  }

  caf::error on_message(wire_message&& msg) override {
    seen.push_back(as_seen(message_frame(msg)));
    return caf::none;
  }

  net::chunk_place chunk_landing(uint64_t, uint64_t) override { return {}; }

  caf::error on_chunk(uint64_t request, wire_bytes data, bool) override {
    seen.push_back(as_seen(chunk_frame(request, data.bytes(), nullptr)));
    return caf::none;
  }

  import_landing* imports() override { return nullptr; }

  std::map<wire::frame_type, uint64_t> bounds{
    {wire::frame_type::message, uint64_t{1} << 30},
    {wire::frame_type::batch, uint64_t{4} << 20},
    {wire::frame_type::chunk, (uint64_t{16} << 20) + 64}};
  uint64_t default_bound = uint64_t{2} << 20;
  std::vector<seen_frame> seen;
};

/// Feeds `bytes` to `reader` in reads of at most `step` bytes, as a socket
/// would deliver them; returns the first error.
caf::error feed(net::frame_reader& reader, std::span<const std::byte> bytes,
                net::frame_sink& sink, size_t step = SIZE_MAX) {
  while (!bytes.empty()) {
    auto into = reader.buffer();
    if (into.empty())
      return caf::make_error(caf::sec::runtime_error, "the reader has no room");
    auto n = std::min({into.size(), step, bytes.size()});
    std::memcpy(into.data(), bytes.data(), n);
    bytes = bytes.subspan(n);
    if (auto err = reader.consume(n, sink))
      return err;
  }
  return caf::none;
}

/// Returns the bytes of `frames` one after the other.
std::vector<std::byte> concat(const std::vector<wire::out_frame>& frames) {
  std::vector<std::byte> result;
  for (auto& frame : frames) {
    auto bytes = frame.flatten();
    result.insert(result.end(), bytes.begin(), bytes.end());
  }
  return result;
}

/// `n` bytes of a pattern that differs with `seed`.
std::vector<std::byte> pattern(size_t n, int seed) {
  std::vector<std::byte> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<std::byte>(i * 13 + static_cast<size_t>(seed));
  return out;
}

/// A message to actor `target` of one element with a 10-byte header and
/// frames of `sizes` bytes, and `error` (none: no error).
wire_message message_of(uint64_t target, const std::vector<size_t>& sizes,
                        caf::error error = {}) {
  wire_message msg;
  msg.target = target;
  msg.sender = 2;
  msg.mid = 3;
  msg.error = std::move(error);
  auto& el = msg.elements.emplace_back();
  el.header = wire_bytes{pattern(10, 1)};
  for (auto size : sizes) {
    auto& frame = el.frames.emplace_back();
    frame.size = size;
    frame.data = wire_bytes{pattern(size, static_cast<int>(size))};
  }
  return msg;
}

/// Small frames of every kind the reader hands on whole.
std::vector<wire::out_frame> small_frames() {
  std::vector<wire::out_frame> result;
  result.push_back(wire::make_frame(credit{1, 2, 3}));
  result.push_back(message_frame(
    message_of(4, {0, 20}, caf::make_error(ferry::errc::link_down, "x"))));
  result.push_back(batch_frame({message_of(5, {3}), message_of(6, {})}));
  result.push_back(chunk_frame(7, pattern(30, 2), nullptr));
  wire::out_frame beat{wire::frame_type::heartbeat};
  beat.finish();
  result.push_back(std::move(beat));
  return result;
}

/// Frames longer than the reader's buffer, which it streams piece by piece
/// (a message with a piece of its own buffer and an error, a chunk, a
/// message that ends with its last piece), around small ones.
std::vector<wire::out_frame> mixed_frames() {
  auto result = small_frames();
  result.push_back(message_frame(message_of(
    8, {300 << 10, 100, 0}, caf::make_error(ferry::errc::no_such_actor, "y"))));
  result.push_back(chunk_frame(9, pattern(300 << 10, 3), nullptr));
  result.push_back(wire::make_frame(transfer_done{10}));
  result.push_back(message_frame(message_of(11, {5, 280 << 10})));
  return result;
}

std::vector<seen_frame> as_seen(const std::vector<wire::out_frame>& frames) {
  std::vector<seen_frame> result;
  for (auto& frame : frames)
    result.push_back(as_seen(frame));
  return result;
}

/// The resident memory of this process in KiB (from /proc), -1 if unread.
long resident_kib() {
  std::ifstream status{"/proc/self/status"};
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stol(line.substr(6));
  return -1;
}

} // namespace

TEST(hostile_frame_reader, FramesOfLengthZeroEndWholeOrInAnError) {
  // Arrange: a heartbeat, a message and a chunk frame of no body.
  recording_sink sink;
  net::frame_reader beat_reader{false};
  net::frame_reader message_reader{false};
  net::frame_reader chunk_reader{false};
  // Act
  auto beat = feed(beat_reader, header(0, type_number(wire::frame_type::heartbeat)),
                   sink);
  auto message = feed(message_reader,
                      header(0, type_number(wire::frame_type::message)), sink);
  auto chunk = feed(chunk_reader, header(0, type_number(wire::frame_type::chunk)),
                    sink);
  // Assert: the heartbeat is whole; a message needs its head, a chunk its
  // request id.
  EXPECT_FALSE(beat) << ferry::render(beat);
  EXPECT_TRUE(beat_reader.idle());
  EXPECT_EQ(sink.seen,
            (std::vector<seen_frame>{{wire::frame_type::heartbeat, {}}}));
  EXPECT_TRUE(mentions(message, "a head of 0 bytes"));
  EXPECT_TRUE(mentions(chunk, "a chunk frame of 0 bytes, shorter than its "
                              "request id"));
}

TEST(hostile_frame_reader, ClaimsOf2To32And2To63BytesAreRefusedAtTheHeader) {
  // Arrange: headers alone, without a byte of body, for each kind of frame
  // the reader reads otherwise (streamed, collected, whole).
  std::vector<std::string> wrong;
  for (auto type : {wire::frame_type::message, wire::frame_type::chunk,
                    wire::frame_type::batch, wire::frame_type::credit}) {
    for (auto length : {uint64_t{1} << 32, uint64_t{1} << 63}) {
      recording_sink sink;
      net::frame_reader reader{false};
      // Act
      auto err = feed(reader, header(length, type_number(type)), sink);
      // Assert: refused at once, naming the claim and the bound.
      auto claim = std::string{"a "} + wire::name_of(type) + " frame of "
                   + std::to_string(length) + " bytes, above the "
                   + std::to_string(sink.max_body(type));
      if (!mentions(err, claim))
        wrong.push_back(claim + ": " + ferry::render(err));
      if (!sink.seen.empty())
        wrong.push_back(claim + ": a frame was reported");
    }
  }
  EXPECT_TRUE(wrong.empty()) << testing::PrintToString(wrong);
}

TEST(hostile_frame_reader, ClaimWithinTheBoundKeepsOnlyTheBytesThatArrived) {
  // Arrange: a sink that takes frames of any length, and a frame that
  // claims 2^63 - 1 bytes (more than any buffer can hold) of which 1 MiB
  // comes.
  recording_sink sink;
  sink.default_bound = UINT64_MAX;
  net::frame_reader reader{false};
  auto bytes = header(INT64_MAX, type_number(wire::frame_type::credit));
  auto some = pattern(1 << 20, 4);
  bytes.insert(bytes.end(), some.begin(), some.end());
  auto before = resident_kib();
  // Act
  caf::error err;
  EXPECT_NO_THROW(err = feed(reader, bytes, sink, 64 << 10));
  auto during = resident_kib();
  // Assert: the reader waits for the rest, reporting nothing, having taken
  // about the memory of what came.
  EXPECT_FALSE(err) << ferry::render(err);
  EXPECT_TRUE(sink.seen.empty());
  EXPECT_FALSE(reader.idle());
  ASSERT_GT(before, 0) << "cannot read this process's resident memory";
  EXPECT_LT(during - before, 32 * 1024)
    << "resident KiB before " << before << ", after 1 MiB " << during;
}

TEST(hostile_frame_reader, StreamedMessagePieceTakesMemoryOnlyAsItsBytesArrive) {
  // Arrange: a message frame of 256 MiB (within the sink's bound of 1 GiB,
  // as it is within a link's default max-message-size) whose one piece
  // claims nearly all of it, and 1 MiB of that piece.
  recording_sink sink;
  net::frame_reader reader{false};
  // The body's head length and head ("fields") end with its frame's le64
  // data length; the element's 10-byte header follows, then the frame.
  auto frame = body_of(message_frame(message_of(1, {64})));
  const uint64_t piece = uint64_t{256} << 20;
  auto fields = frame.size() - 10 - 64;
  for (size_t i = 0; i < 8; ++i)
    frame[fields - 8 + i] = static_cast<std::byte>(piece >> (8 * i));
  frame.resize(fields + 10);
  auto bytes = header(fields + 10 + piece,
                      type_number(wire::frame_type::message));
  bytes.insert(bytes.end(), frame.begin(), frame.end());
  auto some = pattern(1 << 20, 5);
  bytes.insert(bytes.end(), some.begin(), some.end());
  auto before = resident_kib();
  // Act
  auto err = feed(reader, bytes, sink);
  auto during = resident_kib();
  // Assert: the reader waits for the rest, having taken about the memory
  // of what came, not of what was claimed.
  EXPECT_FALSE(err) << ferry::render(err);
  EXPECT_TRUE(sink.seen.empty());
  ASSERT_GT(before, 0) << "cannot read this process's resident memory";
  EXPECT_LT(during - before, 64 * 1024)
    << "resident KiB before " << before << ", after 1 MiB of a claimed "
    << (piece >> 20) << " MiB piece " << during;
}

TEST(hostile_frame_reader, UnknownFrameTypesAreRefusedByNumber) {
  // Arrange
  std::vector<std::string> wrong;
  for (uint16_t type : {uint16_t{0}, uint16_t{7}, uint16_t{99},
                        uint16_t{0xffff}}) {
    recording_sink sink;
    net::frame_reader reader{false};
    // Act
    auto err = feed(reader, header(0, type), sink);
    // Assert
    auto why = "a frame of unknown type " + std::to_string(type);
    if (!mentions(err, why))
      wrong.push_back(why + ": " + ferry::render(err));
  }
  EXPECT_TRUE(wrong.empty()) << testing::PrintToString(wrong);
}

TEST(hostile_frame_reader, FramesWithFlagsSetAreRefused) {
  // Arrange: a credit frame's header with a flag set, low and high.
  recording_sink sink;
  net::frame_reader low{false};
  net::frame_reader high{false};
  auto body = body_of(wire::make_frame(credit{1, 2, 3}));
  auto with_low = header(body.size(), type_number(wire::frame_type::credit), 1);
  auto with_high = header(body.size(), type_number(wire::frame_type::credit),
                          0x8000);
  with_low.insert(with_low.end(), body.begin(), body.end());
  with_high.insert(with_high.end(), body.begin(), body.end());
  // Act
  auto err_low = feed(low, with_low, sink);
  auto err_high = feed(high, with_high, sink);
  // Assert
  EXPECT_TRUE(mentions(err_low, "a credit frame with flags 1 (none are "
                                "defined)"));
  EXPECT_TRUE(mentions(err_high, "a credit frame with flags 32768"));
  EXPECT_TRUE(sink.seen.empty());
}

TEST(hostile_frame_reader, FrameOverItsTypesBoundIsRefusedBeforeItsBody) {
  // Arrange: a sink that takes credit frames of 24 bytes (a credit's size)
  // and heartbeats of none, like a link.
  recording_sink sink;
  sink.bounds[wire::frame_type::credit] = 24;
  sink.bounds[wire::frame_type::heartbeat] = 0;
  net::frame_reader at_bound{false};
  net::frame_reader over{false};
  net::frame_reader beat{false};
  // Act: a whole credit frame; a credit header claiming 25 bytes; a
  // heartbeat header claiming one.
  auto err_at = feed(at_bound, wire::make_frame(credit{1, 2, 3}).flatten(),
                     sink);
  auto err_over = feed(over, header(25, type_number(wire::frame_type::credit)),
                       sink);
  auto err_beat = feed(beat, header(1, type_number(wire::frame_type::heartbeat)),
                       sink);
  // Assert
  EXPECT_FALSE(err_at) << ferry::render(err_at);
  EXPECT_EQ(sink.seen.size(), 1u);
  EXPECT_TRUE(mentions(err_over, "a credit frame of 25 bytes, above the 24"));
  EXPECT_TRUE(mentions(err_beat, "a heartbeat frame of 1 bytes, above the 0"));
}

TEST(hostile_frame_reader, MessageHeadClaimingMoreThanTheFrameHoldsIsRefused) {
  // Arrange: a small message frame (read whole) and a 1 MiB one (streamed),
  // each with a head that claims more than the frame: a head length past
  // the frame's end, and a piece one byte longer than the frame holds. Of
  // the streamed frame only the header and the head come.
  // A body's head length and head ("fields") end with the last frame's
  // le64 data length; its pieces (a 10-byte header, then the frames) follow.
  auto small = body_of(message_frame(message_of(1, {20})));
  auto small_fields = small.size() - 10 - 20;
  auto head_too_long = small;
  for (size_t i = 0; i < 4; ++i)
    head_too_long[i] = static_cast<std::byte>(small.size() >> (8 * i));
  auto piece_too_long = small;
  piece_too_long[small_fields - 8] = std::byte{21};
  auto whole = [](const std::vector<std::byte>& body) {
    auto result = header(body.size(), type_number(wire::frame_type::message));
    result.insert(result.end(), body.begin(), body.end());
    return result;
  };
  const uint64_t streamed = 1 << 20;
  auto streamed_head_too_long = header(streamed,
                                       type_number(wire::frame_type::message));
  for (size_t i = 0; i < 4; ++i)
    streamed_head_too_long.push_back(static_cast<std::byte>(streamed >> (8 * i)));
  auto big = body_of(message_frame(message_of(1, {streamed - 100})));
  auto big_fields = big.size() - 10 - (streamed - 100);
  big.resize(big_fields);
  for (size_t i = 0; i < 8; ++i)
    big[big_fields - 8 + i] = static_cast<std::byte>(streamed >> (8 * i));
  auto streamed_piece_too_long = header(streamed,
                                        type_number(wire::frame_type::message));
  streamed_piece_too_long.insert(streamed_piece_too_long.end(), big.begin(),
                                 big.end());
  std::vector<caf::error> errors;
  // Act
  for (auto* bytes : {&head_too_long, &piece_too_long}) {
    recording_sink sink;
    net::frame_reader reader{false};
    errors.push_back(feed(reader, whole(*bytes), sink));
  }
  for (auto* bytes : {&streamed_head_too_long, &streamed_piece_too_long}) {
    recording_sink sink;
    net::frame_reader reader{false};
    errors.push_back(feed(reader, *bytes, sink));
  }
  // Assert
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_TRUE(mentions(errors[0], "a head of " + std::to_string(small.size())
                                    + " bytes"));
  EXPECT_TRUE(mentions(errors[1], "frame 0 of element 0 claims 21 bytes, "
                                  "more than the frame holds"));
  EXPECT_TRUE(mentions(errors[2], "a message head of 1048576 bytes in a "
                                  "frame of 1048576"));
  EXPECT_TRUE(mentions(errors[3], "frame 0 of element 0 claims 1048576 bytes, "
                                  "more than the frame holds"));
}

TEST(hostile_frame_reader, ErrorFlagWithoutAnErrorIsRefusedOnBothPaths) {
  // Arrange: a small and a streamed message frame whose error was written
  // as none (code 0), and a streamed one whose flag promises an error
  // where the frame ends.
  std::vector<std::vector<std::byte>> frames;
  for (size_t size : {size_t{20}, size_t{300} << 10}) {
    auto bytes = message_frame(message_of(1, {size}, caf::make_error(
                                                      ferry::errc::link_down,
                                                      "z")))
                   .flatten();
    // The error is the frame's last field: u8 code, le64 category, str
    // text of one byte.
    bytes[bytes.size() - 14] = std::byte{0};
    frames.push_back(std::move(bytes));
  }
  auto flag_only = message_frame(message_of(1, {300 << 10})).flatten();
  flag_only[wire::header_size + 4 + 24] = std::byte{1};
  frames.push_back(std::move(flag_only));
  std::vector<caf::error> errors;
  // Act
  for (auto& bytes : frames) {
    recording_sink sink;
    net::frame_reader reader{false};
    errors.push_back(feed(reader, bytes, sink));
    EXPECT_TRUE(sink.seen.empty());
  }
  // Assert
  EXPECT_TRUE(mentions(errors[0], "an error flag without an error"));
  EXPECT_TRUE(mentions(errors[1], "a message frame with an error flag but no "
                                  "error"));
  EXPECT_TRUE(mentions(errors[2], "a message's error of 0 bytes"));
}

TEST(hostile_frame_reader, BytesAfterAMessageAreRefusedOnBothPaths) {
  // Arrange: a small and a streamed message frame, each with a byte after
  // its last piece (the frame header counts it).
  std::vector<std::vector<std::byte>> frames;
  for (size_t size : {size_t{20}, size_t{300} << 10}) {
    auto body = body_of(message_frame(message_of(1, {size})));
    body.push_back(std::byte{0});
    auto bytes = header(body.size(), type_number(wire::frame_type::message));
    bytes.insert(bytes.end(), body.begin(), body.end());
    frames.push_back(std::move(bytes));
  }
  std::vector<caf::error> errors;
  // Act
  for (auto& bytes : frames) {
    recording_sink sink;
    net::frame_reader reader{false};
    errors.push_back(feed(reader, bytes, sink));
  }
  // Assert
  EXPECT_TRUE(mentions(errors[0], "1 bytes after its last field"));
  EXPECT_TRUE(mentions(errors[1], "1 bytes after a message's pieces"));
}

TEST(hostile_frame_reader, FramesSplitAtEveryByteBoundaryReadAsTheFramesWritten) {
  // Arrange: the preface and frames of every kind, small and streamed,
  // handed over one byte per read; and the small frames split in two at
  // every byte.
  auto frames = mixed_frames();
  std::vector<std::byte> stream(wire::preface.begin(), wire::preface.end());
  auto bytes = concat(frames);
  stream.insert(stream.end(), bytes.begin(), bytes.end());
  auto small = concat(small_frames());
  recording_sink one_by_one;
  net::frame_reader reader{true};
  size_t split_wrong = 0;
  // Act
  auto err = feed(reader, stream, one_by_one, 1);
  for (size_t k = 0; k <= small.size(); ++k) {
    recording_sink sink;
    net::frame_reader split{false};
    auto first = feed(split, std::span{small}.first(k), sink);
    auto rest = feed(split, std::span{small}.subspan(k), sink);
    if (first || rest || sink.seen != as_seen(small_frames()) || !split.idle())
      ++split_wrong;
  }
  // Assert
  EXPECT_FALSE(err) << ferry::render(err);
  EXPECT_TRUE(one_by_one.seen == as_seen(frames))
    << one_by_one.seen.size() << " frames read of " << frames.size();
  EXPECT_TRUE(reader.idle());
  EXPECT_EQ(split_wrong, 0u) << "of " << small.size() + 1 << " splits";
}

TEST(hostile_frame_reader, SeveralFramesInOneReadAreEachReported) {
  // Arrange: the small frames and a 100 KiB chunk, all in one read.
  auto frames = small_frames();
  frames.push_back(chunk_frame(12, pattern(100 << 10, 6), nullptr));
  frames.push_back(wire::make_frame(credit{4, 5, 6}));
  auto bytes = concat(frames);
  recording_sink sink;
  net::frame_reader reader{false};
  ASSERT_LE(bytes.size(), reader.buffer().size());
  // Act
  auto err = feed(reader, bytes, sink);
  // Assert
  EXPECT_FALSE(err) << ferry::render(err);
  EXPECT_TRUE(sink.seen == as_seen(frames))
    << sink.seen.size() << " frames read of " << frames.size();
  EXPECT_TRUE(reader.idle());
}

TEST(hostile_frame_reader, LaneRecordsThatDisagreeWithTheirHeaderAreRefused) {
  // Arrange: records shorter than a header, longer and shorter than their
  // header claims, over the sink's bound, of an unknown type; and a whole
  // one.
  auto good = wire::make_frame(credit{1, 2, 3}).flatten();
  auto longer = good;
  longer.push_back(std::byte{0});
  auto shorter = std::vector<std::byte>(good.begin(), good.end() - 1);
  auto over_bound = header(25, type_number(wire::frame_type::credit));
  over_bound.resize(over_bound.size() + 25);
  auto unknown = header(0, 99);
  recording_sink sink;
  sink.bounds[wire::frame_type::credit] = 24;
  // Act
  auto err_tiny = net::frame_reader::read_record(std::span{good}.first(11),
                                                  sink);
  auto err_longer = net::frame_reader::read_record(longer, sink);
  auto err_shorter = net::frame_reader::read_record(shorter, sink);
  auto err_over = net::frame_reader::read_record(over_bound, sink);
  auto err_unknown = net::frame_reader::read_record(unknown, sink);
  auto err_good = net::frame_reader::read_record(good, sink);
  // Assert
  EXPECT_TRUE(mentions(err_tiny, "a record of 11 bytes, shorter than a frame "
                                 "header"));
  EXPECT_TRUE(mentions(err_longer, "claims 24 bytes of body but holds 25"));
  EXPECT_TRUE(mentions(err_shorter, "claims 24 bytes of body but holds 23"));
  EXPECT_TRUE(mentions(err_over, "a credit frame of 25 bytes, above the 24"));
  EXPECT_TRUE(mentions(err_unknown, "a frame of unknown type 99"));
  EXPECT_FALSE(err_good) << ferry::render(err_good);
  EXPECT_EQ(sink.seen,
            (std::vector<seen_frame>{{wire::frame_type::credit,
                                      body_of(wire::make_frame(
                                        credit{1, 2, 3}))}}));
}
