// A peer that does not follow ferry's rules: a plain CAF process speaking
// ferry's wire format by hand sends what a well-behaved node never would
// (a family outside the allowlist, garbage headers and frames). The ferry
// node must answer each with a typed error, count the refusal, and keep
// serving well-behaved peers.
#include "test_types.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/test/child_process.hpp"

#include "detail/wire.hpp"

#include "ferry/serializers/payload.hpp"
#include "ferry/store/object_store.hpp"

#include <caf/all.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/io/all.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include <unistd.h>

using namespace std::chrono_literals;
using namespace ferry::detail;

namespace {

/// Which landing the chunk reply to the first of two chunk requests names.
enum class named_landing { the_second_requests, none_registered };

class hostile_fixture : public testing::Test {
protected:
  /// Starts the peer with `extra_flags` after the fixture's own.
  explicit hostile_fixture(std::vector<std::string> extra_flags = {}) {
    cfg_.load<caf::io::middleman>();
    register_wire_types(cfg_);
    std::vector<std::string> flags{"--ferry.node-name=B",
                                   "--ferry.store.disabled",
                                   "--ferry.link.deserializers=[\"msgpack\"]"};
    flags.insert(flags.end(), extra_flags.begin(), extra_flags.end());
    peer_ = std::make_unique<ferry::test::child_process>(FERRY_TEST_NODE,
                                                         std::move(flags));
    auto port = peer_->wait_for("port ");
    EXPECT_TRUE(port);
    port_ = static_cast<uint16_t>(port ? std::stoi(*port) : 0);
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    self_ = std::make_unique<caf::scoped_actor>(*sys_);
  }

  ~hostile_fixture() override {
    self_.reset();
    sys_.reset();
    peer_->close_stdin();
    peer_->wait(10s);
  }

  /// Connects and handshakes like a node named "rogue" speaking wire
  /// protocol `protocol`; returns the id of the peer's default actor (0 when
  /// refused, with the peer's error in `refusal` if given).
  uint64_t handshake(uint32_t protocol = wire_protocol_version,
                     caf::error* refusal = nullptr,
                     uint64_t link_token = rogue_token) {
    auto gw = sys_->middleman().remote_actor("127.0.0.1", port_);
    EXPECT_TRUE(gw);
    gateway_ = *gw;
    hello mine;
    mine.protocol = protocol;
    mine.node_name = "rogue";
    mine.host_id = "elsewhere";
    mine.serializers = {"msgpack"};
    mine.deserializers = {"msgpack"};
    mine.decodable = {"msgpack", "cereal.binary"};
    mine.gateway = caf::actor_cast<caf::actor>(*self_);
    mine.window_bytes = 1 << 20;
    mine.window_messages = 64;
    mine.link_token = link_token;
    uint64_t target = 0;
    (*self_)->request(gateway_, 10s, mine)
      .receive(
        [&](hello& theirs) {
          target = theirs.default_actor;
          token_ = theirs.link_token;
        },
               [&](caf::error& err) {
                 if (refusal != nullptr)
                   *refusal = std::move(err);
                 else
                   ADD_FAILURE() << caf::to_string(err);
               });
    return target;
  }

  /// Sends `msg` as a request-like wire message and returns the error the
  /// peer answers with (through its link to our "gateway", i.e. `self_`).
  /// `sender` names the requesting actor of "rogue" (default: `self_`).
  caf::error send_and_await_error(wire_message msg, uint64_t sender = 0) {
    auto answer = send_and_await_answer(std::move(msg), sender);
    return answer ? answer->error : caf::error{};
  }

  /// Sends `msg` as a request from actor `sender` of "rogue" (default:
  /// `self_`) and returns the peer's answer, if one came within 10 s.
  std::optional<wire_message> send_and_await_answer(wire_message msg,
                                                    uint64_t sender = 0) {
    msg.sender = sender != 0 ? sender : (*self_)->id();
    msg.mid = (uint64_t{1} << 60) | 42; // a request id
    send_to_peer(std::move(msg));
    std::optional<wire_message> result;
    bool done = false;
    (*self_)->receive_while([&] { return !done; })(
      [&](wire_message& answer) {
        // Everything the peer sends "rogue" names the token "rogue" asked
        // for in its hello.
        EXPECT_EQ(answer.token, rogue_token);
        result = std::move(answer);
        done = true;
      },
      [&](credit& x) { EXPECT_EQ(x.token, rogue_token); },
      caf::after(10s) >> [&] { done = true; });
    return result;
  }

  static wire_element element(const std::string& family,
                              const std::string& type,
                              std::vector<std::byte> frame) {
    ferry::serializers::payload_header header;
    header.family = family;
    header.type_name = type;
    header.frame_sizes = {frame.size()};
    wire_element result;
    result.header = wire_bytes{ferry::serializers::encode_header(header)};
    wire_frame f;
    f.size = frame.size();
    f.data = wire_bytes{std::move(frame)};
    result.frames.push_back(std::move(f));
    return result;
  }

  /// An element whose header names `family` and `type` and whose frames
  /// have `sizes` and `kind`, without data or tickets (callers add those).
  static wire_element described(const std::string& family,
                                const std::string& type, frame_kind kind,
                                const std::vector<uint64_t>& sizes) {
    ferry::serializers::payload_header header;
    header.family = family;
    header.type_name = type;
    header.frame_sizes = sizes;
    wire_element result;
    result.header = wire_bytes{ferry::serializers::encode_header(header)};
    for (auto size : sizes) {
      wire_frame f;
      f.kind = static_cast<uint8_t>(kind);
      f.size = size;
      result.frames.push_back(std::move(f));
    }
    return result;
  }

  /// A message to actor `target` in cereal.binary, a family outside the
  /// peer's allowlist: once read, it is refused with `family_refused`.
  static wire_message refused_for_its_family(uint64_t target) {
    wire_message msg;
    msg.target = target;
    msg.elements.push_back(element("cereal.binary", "string",
                                   std::vector<std::byte>(13, std::byte{1})));
    return msg;
  }

  /// A one-way message to actor `target` with one frame of `size` bytes
  /// that stays with "rogue" as transfer `ticket`, to be pulled.
  static wire_message to_pull(uint64_t target, uint64_t size,
                              uint64_t ticket) {
    wire_message msg;
    msg.target = target;
    msg.mid = caf::make_message_id().integer_value();
    msg.elements.push_back(
      described("msgpack", "string", frame_kind::remote_object, {size}));
    msg.elements[0].frames[0].ticket = ticket;
    return msg;
  }

  /// Sends a request whose one 12 MiB frame stays with "rogue" (another
  /// host), so the peer pulls it in 4 MiB chunks from our gateway (self_);
  /// answers the first chunk request with a chunk of the right length
  /// naming `which` landing; returns the error the request is answered with.
  caf::error answer_first_chunk_naming(named_landing which);

  /// Waits until the peer's link stats contain `needle`; returns the last
  /// stats line read.
  std::string await_peer_stats(const std::string& needle) {
    std::string line;
    for (int i = 0; i < 1000; ++i) {
      line = peer_link_stats();
      if (line.find(needle) != std::string::npos)
        break;
      std::this_thread::sleep_for(10ms);
    }
    return line;
  }

  /// Sends `x` (a wire type) to the peer's gateway with the link's token.
  template <class T>
  void send_to_peer(T x) {
    x.token = token_;
    (*self_)->send(gateway_, std::move(x));
  }

  /// Returns the peer's "refusals=" counter for the link to "rogue".
  std::string peer_link_stats() {
    peer_->write_line("stats");
    std::string result;
    for (;;) {
      auto line = peer_->read_line(10s);
      if (!line || *line == "end")
        break;
      if (line->rfind("link rogue ", 0) == 0)
        result = *line;
    }
    return result;
  }

  caf::actor_system_config cfg_;
  std::unique_ptr<ferry::test::child_process> peer_;
  uint16_t port_ = 0;
  std::unique_ptr<caf::actor_system> sys_;
  std::unique_ptr<caf::scoped_actor> self_;
  caf::actor gateway_;
  /// The token the peer named in its hello (what it expects from "rogue").
  uint64_t token_ = 0;
  /// The token "rogue" names in its hello.
  static constexpr uint64_t rogue_token = 0x5eed;
};

} // namespace

namespace {

template <class T>
std::vector<char> encode_wire(T& msg) {
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  if (auto err = sink(msg))
    ADD_FAILURE() << caf::to_string(err);
  return buf;
}

template <class T>
caf::error decode_wire(const std::vector<char>& buf, T& out) {
  caf::binary_deserializer source{nullptr, buf.data(), buf.size()};
  return source(out);
}

/// Whether `err` is an error whose text contains `needle` (the text shows
/// on failure).
testing::AssertionResult mentions(const caf::error& err,
                                  const std::string& needle) {
  if (!err)
    return testing::AssertionFailure() << "no error; expected \"" << needle
                                       << "\"";
  auto text = caf::to_string(err);
  if (text.find(needle) == std::string::npos)
    return testing::AssertionFailure() << text << " lacks \"" << needle
                                       << "\"";
  return testing::AssertionSuccess();
}

wire_message sample_wire_message() {
  wire_message msg;
  msg.target = 7;
  msg.sender = 9;
  msg.mid = 11;
  msg.token = 13;
  for (size_t e = 0; e < 2; ++e) {
    wire_element el;
    el.header = wire_bytes{std::vector<std::byte>(5 + e, std::byte{0x42})};
    for (size_t f = 0; f < 2; ++f) {
      wire_frame frame;
      frame.kind = static_cast<uint8_t>(f);
      frame.size = 100 * f + e;
      frame.object_id = 3;
      frame.ticket = 4;
      frame.data = wire_bytes{std::vector<std::byte>(10 * f + e, std::byte{7})};
      el.frames.push_back(std::move(frame));
    }
    msg.elements.push_back(std::move(el));
  }
  return msg;
}

} // namespace

TEST(hello_codec, HelloOfAnotherProtocolReadsAsFarAsItsVersion) {
  // Arrange: what a node of protocol 8 sends first (its version, then
  // fields this version lays out otherwise), and a hello of this version
  // cut after its node name.
  std::vector<char> old;
  {
    caf::binary_serializer sink{nullptr, old};
    uint32_t version = 8;
    std::string name = "old";
    ASSERT_FALSE(sink(version, name, name));
  }
  std::vector<char> cut;
  {
    caf::binary_serializer sink{nullptr, cut};
    uint32_t version = wire_protocol_version;
    std::string name = "new";
    ASSERT_FALSE(sink(version, name));
  }
  // Act
  hello from_old;
  auto old_err = decode_wire(old, from_old);
  hello from_cut;
  auto cut_err = decode_wire(cut, from_cut);
  // Assert: the old hello reads as far as its version (accept then
  // refuses it naming both versions); a cut one of this version does not.
  EXPECT_FALSE(old_err) << caf::to_string(old_err);
  EXPECT_EQ(from_old.protocol, 8u);
  EXPECT_TRUE(cut_err);
}

TEST(wire_message_codec, RoundTripKeepsEveryFieldAndTheError) {
  // Arrange
  auto msg = sample_wire_message();
  msg.error = caf::make_error(ferry::errc::no_such_actor, "gone");
  auto big = std::vector<std::byte>(100 << 10, std::byte{9});
  msg.elements[1].frames[1].data = wire_bytes{big};
  // Act
  auto buf = encode_wire(msg);
  wire_message out;
  auto err = decode_wire(buf, out);
  // Assert
  ASSERT_FALSE(err) << caf::to_string(err);
  EXPECT_EQ(out.target, 7u);
  EXPECT_EQ(out.sender, 9u);
  EXPECT_EQ(out.mid, 11u);
  EXPECT_EQ(out.token, 13u);
  EXPECT_EQ(out.error, msg.error);
  ASSERT_EQ(out.elements.size(), 2u);
  for (size_t e = 0; e < 2; ++e) {
    auto& in_el = msg.elements[e];
    auto& out_el = out.elements[e];
    EXPECT_TRUE(std::ranges::equal(out_el.header.bytes(), in_el.header.bytes()));
    ASSERT_EQ(out_el.frames.size(), 2u);
    for (size_t f = 0; f < 2; ++f) {
      EXPECT_EQ(out_el.frames[f].kind, in_el.frames[f].kind);
      EXPECT_EQ(out_el.frames[f].size, in_el.frames[f].size);
      EXPECT_EQ(out_el.frames[f].object_id, 3u);
      EXPECT_EQ(out_el.frames[f].ticket, 4u);
      EXPECT_TRUE(std::ranges::equal(out_el.frames[f].data.bytes(),
                                     in_el.frames[f].data.bytes()));
    }
  }
  // The large frame has a buffer of its own: a decoder can adopt it.
  EXPECT_TRUE(out.elements[1].frames[1].data.sole_owner());
}

TEST(wire_message_codec, TruncatedAndCorruptedMessagesGetErrors) {
  // Arrange
  auto msg = sample_wire_message();
  auto buf = encode_wire(msg);
  std::mt19937_64 rng{99};
  size_t errors = 0;
  // Act: every truncation fails; random corruption never crashes.
  for (size_t n = 0; n < buf.size(); ++n) {
    std::vector<char> cut(buf.begin(), buf.begin() + static_cast<ptrdiff_t>(n));
    wire_message out;
    if (decode_wire(cut, out))
      ++errors;
  }
  for (int i = 0; i < 2000; ++i) {
    auto bad = buf;
    for (int k = 0; k < 3; ++k)
      bad[rng() % bad.size()] = static_cast<char>(rng() & 0xFF);
    wire_message out;
    static_cast<void>(decode_wire(bad, out));
  }
  // Assert
  EXPECT_EQ(errors, buf.size());
}

TEST(wire_message_codec, HugeClaimedCountsAreRefusedBeforeAllocating) {
  // Arrange: a head claiming 2^32 - 1 elements and one claiming a 4 GiB
  // header, in a message of a few dozen bytes.
  auto msg = sample_wire_message();
  auto buf = encode_wire(msg);
  // The head starts after CAF's 4-byte length; the element count sits at
  // offset 33 of the head, the first header length right after it.
  auto many_elements = buf;
  std::memset(many_elements.data() + 4 + 33, 0xFF, 4);
  auto huge_header = buf;
  std::memset(huge_header.data() + 4 + 37, 0xFF, 4);
  // Act
  wire_message out1;
  wire_message out2;
  auto err1 = decode_wire(many_elements, out1);
  auto err2 = decode_wire(huge_header, out2);
  // Assert
  ASSERT_TRUE(err1);
  ASSERT_TRUE(err2);
  EXPECT_NE(caf::to_string(err1).find("elements"), std::string::npos)
    << caf::to_string(err1);
  EXPECT_NE(caf::to_string(err2).find("header"), std::string::npos)
    << caf::to_string(err2);
}

TEST(wire_message_codec, ErrorThatMakesCafThrowArrivesAsAnErrorSayingSo) {
  // Arrange: found by fuzz_wire (tests/fuzz/corpus/wire/error_throws): a
  // message whose error's context holds an "@config_value" with an unknown
  // type index, on which CAF's deserializer throws "invalid type found".
  // Read by a gateway's middleman, the exception would end the node. The
  // head (a target of 1, sender 2, mid 3, token 4, the error flag, no
  // elements), then the error's bytes with their length, then a value
  // after it.
  const unsigned char head[] = {0, 0, 0, 37, 1, 0, 0, 0, 0, 0, 0, 0,
                                2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0,
                                0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0,
                                1, 0, 0, 0, 0};
  const unsigned char bad_error[] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 70, 64, 60, 62, 43, 64, 99, 111, 110,
    102, 105, 103, 95, 118, 97, 108, 117, 101, 43, 70, 0, 0, 0, 83, 235, 52,
    118, 101, 116, 1, 0, 0, 0, 0, 241, 255, 240, 81, 1, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 39, 16, 0, 0, 0, 0, 70, 70, 70, 70, 70, 70, 249, 1, 8, 0, 0,
    0, 7, 255, 255, 255, 255, 38, 1};
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  auto length = static_cast<uint32_t>(sizeof(bad_error));
  uint32_t trailer = 0xC0FFEE;
  ASSERT_FALSE(sink.apply_raw(sizeof(head), const_cast<unsigned char*>(head)));
  ASSERT_FALSE(sink(length));
  ASSERT_FALSE(sink.apply_raw(sizeof(bad_error),
                              const_cast<unsigned char*>(bad_error)));
  ASSERT_FALSE(sink(trailer));
  caf::actor_system_config cfg;
  register_wire_types(cfg);
  caf::actor_system sys{cfg};
  caf::binary_deserializer source{sys, buf};
  wire_message out;
  uint32_t after = 0;
  // Act
  caf::error err;
  EXPECT_NO_THROW(err = source(out, after));
  // Assert: the message is read, with an error saying what went wrong, and
  // the reader is where the next value starts.
  ASSERT_FALSE(err) << caf::to_string(err);
  EXPECT_EQ(out.target, 1u);
  EXPECT_EQ(out.mid, 3u);
  EXPECT_EQ(out.token, 4u);
  ASSERT_TRUE(out.error);
  EXPECT_EQ(out.error,
            caf::make_error(ferry::errc::decode_failed, out.error.context()));
  EXPECT_TRUE(mentions(out.error, "sent an error this node cannot read"));
  EXPECT_EQ(after, trailer);
}

namespace {

/// A type that only a writer registers: the reader's CAF does not know it.
struct sender_only {
  int32_t value = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sender_only& x) {
  return f(caf::meta::type_name("test.sender-only"), x.value);
}

} // namespace

TEST(wire_message_codec, ErrorOfATypeUnknownHereLeavesTheBatchWhole) {
  // Arrange: a batch of two messages, the first answering with an error
  // whose context holds a type the reader has not registered (the sender
  // has); CAF dropped the whole batch when that error failed to read.
  caf::actor_system_config writer_cfg;
  register_wire_types(writer_cfg);
  writer_cfg.add_message_type<sender_only>("test.sender-only");
  caf::actor_system writer{writer_cfg};
  wire_batch batch;
  batch.messages.resize(2);
  batch.messages[0].target = 5;
  batch.messages[0].error
    = caf::make_error(ferry::errc::no_such_actor, sender_only{42});
  batch.messages[1].target = 6;
  batch.messages[1].elements.emplace_back().header
    = wire_bytes{std::vector<std::byte>{std::byte{1}}};
  std::vector<char> buf;
  caf::binary_serializer sink{writer, buf};
  ASSERT_FALSE(sink(batch));
  caf::actor_system_config reader_cfg;
  register_wire_types(reader_cfg);
  caf::actor_system reader{reader_cfg};
  caf::binary_deserializer source{reader, buf};
  wire_batch out;
  // Act
  auto err = source(out);
  // Assert: both messages, the first with an error naming the cause.
  ASSERT_FALSE(err) << caf::to_string(err);
  ASSERT_EQ(out.messages.size(), 2u);
  EXPECT_EQ(out.messages[0].target, 5u);
  EXPECT_TRUE(mentions(out.messages[0].error,
                       "sent an error this node cannot read"));
  EXPECT_EQ(out.messages[1].target, 6u);
  ASSERT_EQ(out.messages[1].elements.size(), 1u);
  EXPECT_FALSE(out.messages[1].error);
}

TEST(wire_bytes_codec, RoundTripAtEverySizeClassAndNextValueStillReads) {
  // Arrange: chunk payloads travel as wire_bytes; sizes below and above
  // the 2 MiB huge-page advice, each followed by a value the reader must
  // still find where it belongs.
  for (size_t n : {size_t{0}, size_t{1}, size_t{70} << 10, size_t{3} << 20}) {
    std::vector<std::byte> bytes(n);
    for (size_t i = 0; i < n; ++i)
      bytes[i] = static_cast<std::byte>(i * 31 + 7);
    wire_bytes in{bytes};
    uint32_t trailer = 0xC0FFEE;
    std::vector<char> buf;
    caf::binary_serializer sink{nullptr, buf};
    ASSERT_FALSE(sink(in, trailer));
    // Act
    caf::binary_deserializer source{nullptr, buf.data(), buf.size()};
    wire_bytes out;
    uint32_t after = 0;
    auto err = source(out, after);
    // Assert
    ASSERT_FALSE(err) << n << " bytes: " << caf::to_string(err);
    EXPECT_TRUE(std::ranges::equal(out.bytes(), bytes)) << n << " bytes";
    EXPECT_TRUE(n == 0 || out.sole_owner()) << n << " bytes";
    EXPECT_EQ(after, trailer) << n << " bytes";
    EXPECT_EQ(source.remaining(), 0u) << n << " bytes";
  }
}

TEST(wire_bytes_codec, LengthBeyondTheMessageIsRefused) {
  // Arrange: a length of 17 (CAF's integer encoding) before 16 bytes.
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  uint64_t claimed = 17;
  ASSERT_FALSE(sink(claimed));
  buf.insert(buf.end(), 16, char{1});
  // Act
  wire_bytes out;
  auto err = decode_wire(buf, out);
  // Assert
  EXPECT_TRUE(mentions(err, "claims 17 bytes but the message holds only 16"));
  EXPECT_EQ(out.size(), 0u);
}

std::vector<std::byte> pattern_bytes(size_t n, int seed) {
  std::vector<std::byte> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<std::byte>(i * 13 + static_cast<size_t>(seed));
  return out;
}

/// Chunk `k` of `frame` in chunks of `chunk` bytes (the last one short).
std::span<const std::byte> chunk_of(const std::vector<std::byte>& frame,
                                    size_t chunk, size_t k) {
  auto first = std::min(frame.size(), k * chunk);
  auto last = std::min(frame.size(), (k + 1) * chunk);
  return std::span{frame}.subspan(first, last - first);
}

TEST(landing_buffer, ChunksInAnyOrderMakeTheWholeFrame) {
  // Arrange: a frame of three chunks (the last one short), landed in order
  // and, in a second frame, in the order 2, 0, 1.
  const size_t chunk = 5000;
  auto frame = pattern_bytes(2 * chunk + 123, 3);
  auto piece = [&](size_t k) { return chunk_of(frame, chunk, k); };
  for (auto order : {std::vector<size_t>{0, 1, 2}, std::vector<size_t>{2, 0, 1}}) {
    landing_buffer buf{frame.size()};
    buf.prepare(frame.size());
    // Act
    for (auto k : order)
      ASSERT_TRUE(buf.land(k * chunk, piece(k))) << "chunk " << k;
    auto out = buf.take();
    // Assert
    EXPECT_EQ(out, frame) << "landed in order " << order[0] << order[1]
                          << order[2];
    EXPECT_TRUE(buf.take().empty()) << "taken once";
  }
}

TEST(landing_buffer, ChunkBeyondTheFrameIsRefusedAndWritesNothing) {
  // Arrange
  landing_buffer buf{100};
  auto first = pattern_bytes(60, 1);
  auto tail = pattern_bytes(41, 2);
  buf.prepare(60);
  ASSERT_TRUE(buf.land(0, first));
  // Act: a chunk beyond the prepared part; then, the whole frame prepared,
  // 60 + 41 bytes reach one past the end; so does any offset past it.
  auto unprepared = buf.land(60, std::span{tail}.first(40));
  buf.prepare(100);
  auto past_end = buf.land(60, tail);
  auto far_away = buf.land(uint64_t{1} << 62, std::span{tail}.first(1));
  auto fits = buf.land(60, std::span{tail}.first(40));
  // Assert
  EXPECT_FALSE(unprepared);
  EXPECT_FALSE(past_end);
  EXPECT_FALSE(far_away);
  EXPECT_TRUE(fits);
  auto out = buf.take();
  ASSERT_EQ(out.size(), 100u);
  EXPECT_TRUE(std::equal(first.begin(), first.end(), out.begin()));
  EXPECT_TRUE(std::equal(tail.begin(), tail.begin() + 40, out.begin() + 60));
}

/// A chunk reply for `landing` carrying `bytes`, as its owner writes it.
std::vector<char> chunk_reply_bytes(uint64_t landing,
                                    const std::vector<std::byte>& bytes) {
  chunk_reply reply{landing, wire_bytes{bytes}};
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  EXPECT_FALSE(sink(reply));
  return buf;
}

TEST(chunk_reply_codec, ReplyForARegisteredLandingGoesStraightIntoTheFrame) {
  // Arrange: a frame of two chunks; the second one's landing is registered.
  auto frame = std::make_shared<landing_buffer>(200);
  frame->prepare(200);
  auto first = pattern_bytes(100, 1);
  auto second = pattern_bytes(100, 2);
  ASSERT_TRUE(frame->land(0, first));
  auto key = register_landing(frame, 100, 100);
  auto buf = chunk_reply_bytes(key, second);
  // Act
  chunk_reply out;
  auto err = decode_wire(buf, out);
  // Assert: landed, nothing kept aside, and the landing is used up.
  ASSERT_FALSE(err) << caf::to_string(err);
  EXPECT_TRUE(out.landed);
  EXPECT_EQ(out.landing, key);
  EXPECT_EQ(out.data.size(), 0u);
  auto whole = frame->take();
  EXPECT_TRUE(std::equal(first.begin(), first.end(), whole.begin()));
  EXPECT_TRUE(std::equal(second.begin(), second.end(), whole.begin() + 100));
  chunk_reply again;
  ASSERT_FALSE(decode_wire(buf, again));
  EXPECT_FALSE(again.landed);
  EXPECT_EQ(again.data.size(), 100u);
}

TEST(chunk_reply_codec, ReplyThatMatchesNoLandingIsKeptAsideAndWritesNothing) {
  // Arrange: a landing for 100 bytes; replies with another length, an
  // unknown key, and for a frame given up meanwhile.
  auto frame = std::make_shared<landing_buffer>(100);
  frame->prepare(100);
  auto key = register_landing(frame, 0, 100);
  auto gone = std::make_shared<landing_buffer>(100);
  gone->prepare(100);
  auto gone_key = register_landing(gone, 0, 100);
  gone.reset();
  auto bytes = pattern_bytes(100, 5);
  auto longer = pattern_bytes(101, 6);
  struct sample {
    const char* what;
    std::vector<char> buf;
    size_t size;
  };
  std::vector<sample> samples{
    {"another length", chunk_reply_bytes(key, longer), 101},
    {"an unknown key", chunk_reply_bytes(key ^ 1, bytes), 100},
    {"no landing", chunk_reply_bytes(0, bytes), 100},
    {"a frame given up", chunk_reply_bytes(gone_key, bytes), 100},
  };
  for (auto& x : samples) {
    // Act
    chunk_reply out;
    auto err = decode_wire(x.buf, out);
    // Assert
    ASSERT_FALSE(err) << x.what << ": " << caf::to_string(err);
    EXPECT_FALSE(out.landed) << x.what;
    EXPECT_EQ(out.data.size(), x.size) << x.what;
  }
  EXPECT_EQ(frame->take(), std::vector<std::byte>(100)) << "nothing landed";
  release_landing(key);
}

TEST(chunk_reply_codec, LengthBeyondTheMessageIsRefusedEvenForALanding) {
  // Arrange: a reply claiming 100 bytes for a registered landing of 100,
  // cut to 60 bytes of data.
  auto frame = std::make_shared<landing_buffer>(100);
  frame->prepare(100);
  auto key = register_landing(frame, 0, 100);
  auto buf = chunk_reply_bytes(key, pattern_bytes(100, 7));
  buf.resize(buf.size() - 40);
  // Act
  chunk_reply out;
  auto err = decode_wire(buf, out);
  // Assert
  EXPECT_TRUE(mentions(err, "claims 100 bytes but the message holds only 60"));
  EXPECT_FALSE(out.landed);
  EXPECT_EQ(frame->take(), std::vector<std::byte>(100));
  release_landing(key);
}

TEST(chunk_reply_codec, ChunksOfAStoreHandleLandInTheNewStoreObject) {
  // Arrange: a store object of three chunks (the last one short), as the
  // puller creates for a store handle pulled from another host; the middle
  // chunk's landing is registered.
  ferry::store::store_config cfg;
  cfg.name = "ferry-test-" + std::to_string(::getpid()) + "-landing";
  cfg.capacity = uint64_t{1} << 20;
  cfg.spill_directory = "/tmp/" + cfg.name + "-spill";
  cfg.reaper_interval = std::chrono::milliseconds{0};
  struct cleanup {
    std::string name;
    ~cleanup() { static_cast<void>(ferry::store::object_store::remove(name)); }
  } removes{cfg.name};
  auto store = ferry::store::object_store::attach(cfg);
  ASSERT_TRUE(store) << ferry::render(store.error());
  const size_t chunk = 5000;
  auto frame = pattern_bytes(2 * chunk + 123, 9);
  auto piece = [&](size_t k) {
    auto bytes = chunk_of(frame, chunk, k);
    return std::vector<std::byte>{bytes.begin(), bytes.end()};
  };
  auto object = store->create(frame.size());
  ASSERT_TRUE(object) << ferry::render(object.error());
  auto id = object->id();
  auto target = std::make_shared<landing_buffer>(std::move(*object));
  auto key = register_landing(target, chunk, chunk);
  // Act: the middle chunk as a BASP worker reads its reply, the others as
  // the puller lands replies read aside; one more beyond the object.
  chunk_reply reply;
  auto err = decode_wire(chunk_reply_bytes(key, piece(1)), reply);
  auto first = target->land(0, piece(0));
  auto last = target->land(2 * chunk, piece(2));
  auto beyond = target->land(2 * chunk + 1, piece(2));
  auto ref = target->seal();
  // Assert
  ASSERT_FALSE(err) << caf::to_string(err);
  EXPECT_TRUE(reply.landed);
  EXPECT_TRUE(first);
  EXPECT_TRUE(last);
  EXPECT_FALSE(beyond);
  ASSERT_TRUE(ref) << ferry::render(ref.error());
  EXPECT_EQ(ref->id(), id);
  auto bytes = ref->bytes();
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), frame.begin(),
                         frame.end()));
  EXPECT_FALSE(target->land(0, piece(0))) << "nothing lands after the seal";
  EXPECT_FALSE(target->seal()) << "sealed once";
}

TEST(wire_batch_codec, MoreMessagesThanABatchHoldsAreRefused) {
  // Arrange: a well-formed batch one message above the limit (its bytes
  // would hold them all), and one at the limit.
  wire_batch over;
  over.messages.resize(max_batch_messages + 1);
  wire_batch at;
  at.messages.resize(max_batch_messages);
  auto over_buf = encode_wire(over);
  auto at_buf = encode_wire(at);
  // Act
  wire_batch out_over;
  wire_batch out_at;
  auto err_over = decode_wire(over_buf, out_over);
  auto err_at = decode_wire(at_buf, out_at);
  // Assert
  EXPECT_TRUE(
    mentions(err_over, "8193 messages, more than a batch holds (8192)"));
  EXPECT_TRUE(out_over.messages.empty());
  ASSERT_FALSE(err_at) << caf::to_string(err_at);
  EXPECT_EQ(out_at.messages.size(), size_t{max_batch_messages});
}

TEST(wire_batch_codec, RoundTripKeepsEveryMessageInOrder) {
  // Arrange
  wire_batch batch;
  for (uint64_t i = 0; i < 3; ++i) {
    auto msg = sample_wire_message();
    msg.target = 100 + i;
    batch.messages.push_back(std::move(msg));
  }
  batch.messages[1].error = caf::make_error(ferry::errc::link_down, "x");
  // Act
  auto buf = encode_wire(batch);
  wire_batch out;
  auto err = decode_wire(buf, out);
  // Assert
  ASSERT_FALSE(err) << caf::to_string(err);
  ASSERT_EQ(out.messages.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out.messages[i].target, 100 + i);
    ASSERT_EQ(out.messages[i].elements.size(), 2u);
    EXPECT_TRUE(std::ranges::equal(
      out.messages[i].elements[1].frames[1].data.bytes(),
      batch.messages[i].elements[1].frames[1].data.bytes()));
  }
  EXPECT_EQ(out.messages[1].error, batch.messages[1].error);
  EXPECT_FALSE(out.messages[2].error);
}

TEST(wire_batch_codec, TruncationsAndHugeCountsGetErrors) {
  // Arrange
  wire_batch batch;
  batch.messages.push_back(sample_wire_message());
  batch.messages.push_back(sample_wire_message());
  auto buf = encode_wire(batch);
  // The count is the first 4 bytes: 2^32 - 1 (above the limit), and the
  // limit itself in a buffer that holds two messages.
  auto huge = buf;
  std::memset(huge.data(), 0xFF, 4);
  auto many = buf;
  {
    std::vector<char> count;
    caf::binary_serializer sink{nullptr, count};
    uint32_t n = max_batch_messages;
    ASSERT_FALSE(sink(n));
    ASSERT_EQ(count.size(), 4u);
    std::copy(count.begin(), count.end(), many.begin());
  }
  // Act
  size_t errors = 0;
  for (size_t n = 0; n < buf.size(); ++n) {
    std::vector<char> cut(buf.begin(), buf.begin() + static_cast<ptrdiff_t>(n));
    wire_batch out;
    if (decode_wire(cut, out))
      ++errors;
  }
  wire_batch out1;
  wire_batch out2;
  auto err_huge = decode_wire(huge, out1);
  auto err_many = decode_wire(many, out2);
  // Assert
  EXPECT_EQ(errors, buf.size());
  EXPECT_TRUE(mentions(err_huge, "more than a batch holds"));
  EXPECT_TRUE(mentions(err_many, "8192 messages in"));
}

TEST_F(hostile_fixture, PeerSpeakingAnotherWireProtocolIsRefusedByName) {
  // Arrange: a node of the ferry before cereal.json's split arrays (6).
  caf::error refusal;
  // Act
  auto target = handshake(wire_protocol_version - 1, &refusal);
  // Assert
  EXPECT_EQ(target, 0u);
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal,
            caf::make_error(ferry::errc::handshake_failed, refusal.context()));
  auto text = ferry::render(refusal);
  EXPECT_NE(text.find("protocol " + std::to_string(wire_protocol_version - 1)),
            std::string::npos)
    << text;
  EXPECT_NE(text.find("run the same ferry version"), std::string::npos)
    << text;
  // The node lives on: a peer with the right protocol gets in.
  EXPECT_NE(handshake(), 0u);
}

TEST_F(hostile_fixture, HelloNamingAnotherNodesGatewayIsRefused) {
  // Arrange: "rogue" says hello in the name of the peer's own gateway: a
  // link is keyed by the gateway's node, so this would have taken the link
  // of that node (here: made one to the peer itself).
  auto gw = sys_->middleman().remote_actor("127.0.0.1", port_);
  ASSERT_TRUE(gw);
  hello mine;
  mine.node_name = "rogue";
  mine.host_id = "elsewhere";
  mine.serializers = {"msgpack"};
  mine.deserializers = {"msgpack"};
  mine.decodable = {"msgpack"};
  mine.gateway = *gw;
  caf::error err;
  // Act
  (*self_)->request(*gw, 10s, mine)
    .receive([&](hello&) {}, [&](caf::error& x) { err = std::move(x); });
  // Assert
  ASSERT_TRUE(err) << "the peer accepted the hello";
  EXPECT_EQ(err, caf::make_error(ferry::errc::handshake_failed, err.context()));
  EXPECT_TRUE(mentions(err, "naming a gateway on another node"));
  EXPECT_EQ(peer_link_stats(), "");
}

TEST_F(hostile_fixture, HelloNamingAnotherTokenWhileTheLinkIsUpIsRefused) {
  // Arrange: a link to "rogue" is up.
  ASSERT_NE(handshake(), 0u);
  // Act: a hello of "rogue" naming another token (a peer whose own link is
  // gone while this one lives on, or a third node in its name), then one
  // naming the link's token (handshakes crossing each other).
  caf::error refusal;
  auto other_token = handshake(wire_protocol_version, &refusal,
                               rogue_token + 1);
  auto same_token = handshake();
  // Assert: the first fails loudly instead of leaving one direction
  // dropping everything; the second is answered as the link is.
  EXPECT_EQ(other_token, 0u);
  ASSERT_TRUE(refusal) << "the peer took the other token";
  EXPECT_EQ(refusal,
            caf::make_error(ferry::errc::handshake_failed, refusal.context()));
  EXPECT_TRUE(mentions(refusal, "still holds a link to node rogue"));
  EXPECT_NE(same_token, 0u);
}

TEST_F(hostile_fixture, FamilyOutsideTheAllowlistIsRefusedWithTypedError) {
  // Arrange
  auto target = handshake();
  ASSERT_NE(target, 0u);
  // Act
  auto err = send_and_await_error(refused_for_its_family(target));
  // Assert
  ASSERT_TRUE(err);
  EXPECT_EQ(err, caf::make_error(ferry::errc::family_refused, err.context()));
  auto text = ferry::render(err);
  EXPECT_NE(text.find("cereal.binary"), std::string::npos) << text;
  EXPECT_NE(text.find("[msgpack]"), std::string::npos) << text;
  EXPECT_NE(peer_link_stats().find("refusals=1"), std::string::npos);
}

TEST_F(hostile_fixture, GarbageHeadersAndFramesGetErrorsAndTheNodeLivesOn) {
  // Arrange
  auto target = handshake();
  ASSERT_NE(target, 0u);
  std::mt19937_64 rng{1234};
  auto random_bytes = [&](size_t n) {
    std::vector<std::byte> result(n);
    for (auto& b : result)
      b = static_cast<std::byte>(rng() & 0xFF);
    return result;
  };
  int errors = 0;
  // Act: random headers, then valid headers with random frames.
  for (int i = 0; i < 20; ++i) {
    wire_message msg;
    msg.target = target;
    wire_element el;
    el.header = wire_bytes{random_bytes(1 + rng() % 64)};
    msg.elements.push_back(std::move(el));
    if (send_and_await_error(std::move(msg)))
      ++errors;
  }
  for (int i = 0; i < 20; ++i) {
    wire_message msg;
    msg.target = target;
    msg.elements.push_back(
      element("msgpack", "test.record", random_bytes(rng() % 256)));
    if (send_and_await_error(std::move(msg)))
      ++errors;
  }
  // Assert: every message got an error, and a real node is still served.
  EXPECT_EQ(errors, 40);
  ferry::node_config cfg;
  cfg.store_enabled = false;
  cfg.default_link.serializers = {"msgpack"};
  ferry::test::register_test_types(cfg);
  auto n = ferry::node::start(cfg);
  ASSERT_TRUE(n);
  auto echo = (*n)->remote_actor("127.0.0.1", port_);
  ASSERT_TRUE(echo) << ferry::render(echo.error());
  caf::scoped_actor self{(*n)->system()};
  std::string reply;
  self->request(*echo, 10s, std::string{"alive"})
    .receive([&](std::string& x) { reply = x; }, [&](caf::error&) {});
  EXPECT_EQ(reply, "evila");
}

namespace {

caf::error hostile_fixture::answer_first_chunk_naming(named_landing which) {
  auto& self = *self_;
  auto target = handshake();
  EXPECT_NE(target, 0u);
  const uint64_t size = uint64_t{12} << 20;
  auto el = described("msgpack", "string", frame_kind::remote_object, {size});
  el.frames[0].ticket = 7;
  wire_message msg;
  msg.target = target;
  msg.sender = self->id();
  msg.mid = (uint64_t{1} << 60) | 43; // a request id
  msg.elements.push_back(std::move(el));
  send_to_peer(std::move(msg));
  std::vector<chunk_request> requests;
  std::vector<caf::response_promise> promises;
  bool done = false;
  self->receive_while([&] { return !done && requests.size() < 2; })(
    [&](chunk_request& req) {
      requests.push_back(req);
      promises.push_back(self->make_response_promise());
    },
    [&](credit&) {}, caf::after(10s) >> [&] { done = true; });
  EXPECT_EQ(requests.size(), 2u) << "the peer did not pull the frame";
  if (requests.size() != 2)
    return {};
  EXPECT_EQ(requests[0].transfer, 7u);
  EXPECT_EQ(requests[0].token, rogue_token);
  EXPECT_NE(requests[0].landing, requests[1].landing);
  EXPECT_EQ(requests[0].length, requests[1].length);
  auto landing = which == named_landing::the_second_requests
                   ? requests[1].landing
                   : requests[0].landing ^ requests[1].landing;
  promises[0].deliver(chunk_reply{
    landing,
    wire_bytes{std::vector<std::byte>(requests[0].length, std::byte{5})}});
  caf::error err;
  done = false;
  self->receive_while([&] { return !done; })(
    [&](wire_message& answer) {
      err = answer.error;
      done = true;
    },
    [&](chunk_request&) {}, [&](transfer_done&) {}, [&](credit&) {},
    caf::after(10s) >> [&] { done = true; });
  return err;
}

} // namespace

TEST_F(hostile_fixture, ChunkReplyNamingAnotherRequestsLandingIsRefused) {
  // Act: the reply lands in the frame (its landing is registered for its
  // length), at the place of the other request.
  auto err = answer_first_chunk_naming(named_landing::the_second_requests);
  // Assert: the message is refused with a typed error naming the cause,
  // and the peer released our transfer.
  ASSERT_TRUE(err) << "no answer to the message";
  EXPECT_EQ(err, caf::make_error(ferry::errc::transfer_failed, err.context()));
  EXPECT_TRUE(mentions(err, "with the chunk of another request"));
  EXPECT_NE(peer_link_stats().find("refusals=1"), std::string::npos);
}

TEST_F(hostile_fixture, ChunkReplyNamingNoLandingIsRefused) {
  // Act: the reply names no registered landing, so it is read aside; such
  // a reply was taken by its message id alone, which is all a node forging
  // another node's replies has to guess.
  auto err = answer_first_chunk_naming(named_landing::none_registered);
  // Assert
  ASSERT_TRUE(err) << "no answer to the message";
  EXPECT_EQ(err, caf::make_error(ferry::errc::transfer_failed, err.context()));
  EXPECT_TRUE(mentions(err, "with the chunk of another request"));
}

TEST_F(hostile_fixture, PulledFrameSizesThatWrapAroundAreRefusedAndTheLinkGoesOn) {
  // Arrange: two frames to pull whose sizes add up to 2^64 (0 when added
  // without a check), the first one larger than any buffer.
  auto target = handshake();
  ASSERT_NE(target, 0u);
  auto el = described("msgpack", "string", frame_kind::remote_object,
                      {UINT64_MAX, 1});
  el.frames[0].ticket = 9;
  el.frames[1].ticket = 8;
  wire_message msg;
  msg.target = target;
  msg.elements.push_back(std::move(el));
  // Act: the message, then an ordinary one behind it on the same link.
  auto err = send_and_await_error(std::move(msg));
  auto next_err = send_and_await_error(refused_for_its_family(target));
  // Assert: a typed error for the first, and the second is still read
  // (refused for its family) instead of waiting behind a dead puller.
  ASSERT_TRUE(err) << "no answer to the message";
  EXPECT_EQ(err, caf::make_error(ferry::errc::message_too_large, err.context()));
  EXPECT_TRUE(mentions(err, "2^64 or more bytes of large frames"));
  EXPECT_EQ(next_err,
            caf::make_error(ferry::errc::family_refused, next_err.context()));
}

TEST_F(hostile_fixture, ThousandsOfMessagesEndingAtOnceBehindAPullCostNoStack) {
  // Arrange: a message with one byte to pull, whose chunk "rogue" holds
  // back, and 15,000 one-way messages queued behind it, each with an empty
  // frame to pull: once the first ends, each of them ends at once (nothing
  // to pull, then refused). The puller took the next one by recursion, some
  // 700 bytes of stack per message in a release build: 15,000 overflowed
  // the worker's 8 MiB stack and the node died.
  auto target = handshake();
  ASSERT_NE(target, 0u);
  send_to_peer(to_pull(target, 1, 5));
  const int queued = 15000;
  for (int i = 0; i < queued; ++i)
    send_to_peer(to_pull(target, 0, 0));
  std::optional<caf::response_promise> pending;
  bool done = false;
  (*self_)->receive_while([&] { return !done && !pending; })(
    [&](chunk_request&) { pending = (*self_)->make_response_promise(); },
    [&](credit&) {}, caf::after(10s) >> [&] { done = true; });
  ASSERT_TRUE(pending) << "the peer did not pull the first message";
  // Act: the chunk fails; every queued message ends right after.
  pending->deliver(caf::make_error(caf::sec::request_timeout));
  size_t refusals = 0;
  done = false;
  (*self_)->receive_while([&] { return !done && refusals < queued + 1; })(
    [&](refusal&) { ++refusals; }, [&](transfer_done&) {}, [&](credit&) {},
    caf::after(20s) >> [&] { done = true; });
  auto next_err = send_and_await_error(refused_for_its_family(target));
  // Assert: every message refused, and the node still answers.
  EXPECT_EQ(refusals, size_t{queued} + 1);
  EXPECT_EQ(next_err,
            caf::make_error(ferry::errc::family_refused, next_err.context()));
}

/// The resident memory of process `pid` in MiB (from /proc), -1 if unread.
long resident_mib(pid_t pid) {
  std::ifstream status{"/proc/" + std::to_string(pid) + "/status"};
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stol(line.substr(6)) / 1024;
  return -1;
}

TEST_F(hostile_fixture, ClaimedFrameTakesMemoryOnlyAsItsChunksAreAskedFor) {
  // Arrange: a message claiming a 2 GiB frame to pull (within the default
  // max-message-size of 16 GiB) whose chunks "rogue" never sends. The
  // receiver zero-filled the whole frame before asking for its first chunk,
  // so some 60 bytes made it commit 2 GiB.
  auto target = handshake();
  ASSERT_NE(target, 0u);
  auto before = resident_mib(peer_->pid());
  ASSERT_GT(before, 0);
  // Act
  send_to_peer(to_pull(target, uint64_t{2} << 30, 5));
  std::vector<caf::response_promise> pending;
  bool done = false;
  (*self_)->receive_while([&] { return !done && pending.size() < 4; })(
    [&](chunk_request&) { pending.push_back((*self_)->make_response_promise()); },
    [&](credit&) {}, caf::after(10s) >> [&] { done = true; });
  auto during = resident_mib(peer_->pid());
  for (auto& promise : pending)
    promise.deliver(caf::make_error(caf::sec::request_timeout));
  bool refused = false;
  done = false;
  (*self_)->receive_while([&] { return !done && !refused; })(
    [&](refusal&) { refused = true; }, [&](credit&) {},
    caf::after(10s) >> [&] { done = true; });
  // The peer lets go of what the message held before it sends the refusal
  // (until session 26 after it), so the next message finds nothing held.
  auto next_err = send_and_await_error(refused_for_its_family(target));
  // Assert: four chunks of 4 MiB asked for, and about that much memory
  // taken for them; the node goes on.
  EXPECT_EQ(pending.size(), 4u);
  EXPECT_TRUE(refused) << "the claimed message was not refused";
  ASSERT_GT(during, 0) << "cannot read the peer's resident memory";
  EXPECT_LT(during - before, 256) << "resident MiB before " << before
                                  << ", while pulling " << during;
  EXPECT_EQ(next_err,
            caf::make_error(ferry::errc::family_refused, next_err.context()))
    << caf::to_string(next_err);
}

TEST_F(hostile_fixture, StoreTicketFromAnotherHostIsRefusedUnredeemed) {
  // Arrange: "rogue" is another host, yet names a store ticket; tickets are
  // sequential, so a guessed one could take another sender's object.
  auto target = handshake();
  ASSERT_NE(target, 0u);
  auto el = described("msgpack", "string", frame_kind::store_object, {64});
  el.frames[0].object_id = 1;
  el.frames[0].ticket = 1;
  wire_message msg;
  msg.target = target;
  msg.elements.push_back(std::move(el));
  // Act
  auto err = send_and_await_error(std::move(msg));
  // Assert
  ASSERT_TRUE(err) << "no answer to the message";
  EXPECT_EQ(err, caf::make_error(ferry::errc::transfer_failed, err.context()));
  EXPECT_TRUE(mentions(err, "does not share this host's store"));
}

TEST_F(hostile_fixture, CompressedFrameClaimingMoreThanItsCodecAllowsIsRefused) {
  // Arrange: 16 bytes of "compressed" data that claim to become 1 GiB, once
  // as lz4 and once as zstd (whose frame header does not say so).
  auto target = handshake();
  ASSERT_NE(target, 0u);
  const uint64_t size = uint64_t{1} << 30;
  std::vector<caf::error> errors;
  for (auto kind : {frame_kind::inline_lz4, frame_kind::inline_zstd}) {
    auto el = described("msgpack", "string", kind, {size});
    el.frames[0].data = wire_bytes{std::vector<std::byte>(16, std::byte{0})};
    wire_message msg;
    msg.target = target;
    msg.elements.push_back(std::move(el));
    // Act
    errors.push_back(send_and_await_error(std::move(msg)));
  }
  // Assert: refused before a buffer of the claimed size is made.
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_TRUE(mentions(errors[0], "more than lz4's largest ratio"));
  EXPECT_TRUE(mentions(errors[1], "the frame's header says otherwise"));
}

TEST_F(hostile_fixture, MessagesWithoutTheLinksTokenAreDroppedUnread) {
  // Arrange: what a third node connected to the peer could send it as
  // "rogue" (CAF believes the source node of a routed message), which does
  // not know the token the peer named in its hello to "rogue": a request,
  // a refusal, a transfer release and a chunk request. Each request would
  // be answered (family_refused) if it were read.
  auto target = handshake();
  ASSERT_NE(target, 0u);
  auto forged_token = token_ ^ 1;
  auto request = [&](uint64_t token, uint64_t id) {
    auto msg = refused_for_its_family(target);
    msg.sender = (*self_)->id();
    msg.mid = (uint64_t{1} << 60) | id;
    msg.token = token;
    return msg;
  };
  // Act
  (*self_)->send(gateway_, request(forged_token, 50));
  (*self_)->send(gateway_, refusal{target, caf::sec::runtime_error,
                                   forged_token});
  (*self_)->send(gateway_, transfer_done{1, forged_token});
  caf::error chunk_err;
  (*self_)
    ->request(gateway_, 10s, chunk_request{1, 0, 1, 0, forged_token})
    .receive([](chunk_reply&) {}, [&](caf::error& x) { chunk_err = x; });
  auto answer = send_and_await_answer(request(token_, 51));
  // Assert: the first answer is the one to the request with the token (the
  // link keeps order), each forgery counted once, the chunk request
  // answered with an error that says why.
  ASSERT_TRUE(answer) << "no answer to the request with the token";
  // (send_and_await_answer sends as request 42.)
  EXPECT_EQ(answer->mid, caf::message_id{(uint64_t{1} << 60) | 42}
                           .response_id()
                           .integer_value());
  EXPECT_EQ(answer->error, caf::make_error(ferry::errc::family_refused,
                                           answer->error.context()));
  EXPECT_TRUE(mentions(chunk_err, "without its token"));
  auto stats = peer_link_stats();
  EXPECT_NE(stats.find(" wrong_token=4"), std::string::npos) << stats;
  EXPECT_NE(stats.find(" refusals=1 "), std::string::npos) << stats;
}

namespace {

/// A peer that keeps at most two proxies of the actors of "rogue".
class hostile_fixture_two_proxies : public hostile_fixture {
protected:
  hostile_fixture_two_proxies()
    : hostile_fixture({"--ferry.link.max-proxies=2"}) {
    // nop
  }

  /// A request to the echo actor ("abc" in msgpack) from actor `sender`;
  /// returns the answer's error (none: answered), or `no_answer`.
  caf::error echo_from(uint64_t target, uint64_t sender) {
    wire_message msg;
    msg.target = target;
    msg.elements.push_back(element(
      "msgpack", "string",
      {std::byte{0xa3}, std::byte{'a'}, std::byte{'b'}, std::byte{'c'}}));
    auto answer = send_and_await_answer(std::move(msg), sender);
    if (!answer)
      return caf::make_error(caf::sec::request_timeout, "no answer");
    EXPECT_EQ(answer->target, sender);
    return answer->error;
  }
};

} // namespace

TEST_F(hostile_fixture_two_proxies, SendersBeyondMaxProxiesAreRefusedUntilOneEnds) {
  // Arrange
  auto target = handshake();
  ASSERT_NE(target, 0u);
  ASSERT_FALSE(echo_from(target, 1001));
  ASSERT_FALSE(echo_from(target, 1002));
  // Act: a third invented sender, one known again, then one more after the
  // peer heard that actor 1001 ended.
  auto third = echo_from(target, 1003);
  auto known = echo_from(target, 1002);
  send_to_peer(down_notice{1001, caf::exit_reason::normal});
  auto after_down = echo_from(target, 1004);
  // Assert
  ASSERT_TRUE(third) << "the third sender's request was served";
  EXPECT_EQ(third, caf::make_error(ferry::errc::too_many_proxies,
                                   third.context()));
  EXPECT_TRUE(mentions(third, "actor 1003 of node rogue"));
  EXPECT_TRUE(mentions(third, "ferry.link.max-proxies"));
  EXPECT_FALSE(known) << ferry::render(known);
  EXPECT_FALSE(after_down) << ferry::render(after_down);
  auto stats = peer_link_stats();
  EXPECT_NE(stats.find(" refusals=1 "), std::string::npos) << stats;
  EXPECT_NE(stats.find(" proxies=2 "), std::string::npos) << stats;
}

TEST_F(hostile_fixture_two_proxies, DownNoticeWithoutTheLinksTokenChangesNothing) {
  // Arrange: both proxies in use.
  auto target = handshake();
  ASSERT_NE(target, 0u);
  ASSERT_FALSE(echo_from(target, 1001));
  ASSERT_FALSE(echo_from(target, 1002));
  // Act: a down notice for actor 1001 as a third node would forge it,
  // without the link's token; then a new sender.
  (*self_)->send(gateway_, down_notice{1001, caf::exit_reason::normal,
                                       token_ ^ 1});
  auto after_forged = echo_from(target, 1003);
  // Assert: the peer still keeps 1001's proxy, so the new sender is over
  // the limit.
  EXPECT_EQ(after_forged, caf::make_error(ferry::errc::too_many_proxies,
                                          after_forged.context()));
  auto stats = peer_link_stats();
  EXPECT_NE(stats.find(" proxies=2 "), std::string::npos) << stats;
  EXPECT_NE(stats.find(" wrong_token=1"), std::string::npos) << stats;
}

namespace {

/// A peer whose frames of 4 KiB and more stay with it until pulled.
class hostile_fixture_small_pulls : public hostile_fixture {
protected:
  hostile_fixture_small_pulls()
    : hostile_fixture({"--ferry.link.pull-threshold=4096"}) {
    // nop
  }

  /// Asks the echo actor for 100,000 bytes (u64 100000, i32 7 in msgpack)
  /// and returns its answer, whose frame stays with the peer to be pulled.
  std::optional<wire_message> ask_for_a_pulled_answer() {
    auto target = handshake();
    EXPECT_NE(target, 0u);
    wire_message msg;
    msg.target = target;
    msg.elements.push_back(element("msgpack", "u64",
                                   {std::byte{0xce}, std::byte{0x00},
                                    std::byte{0x01}, std::byte{0x86},
                                    std::byte{0xa0}}));
    msg.elements.push_back(element("msgpack", "i32", {std::byte{0x07}}));
    return send_and_await_answer(std::move(msg));
  }
};

} // namespace

TEST_F(hostile_fixture_small_pulls, FramesOfATakenMessageAreReleasedWithoutTransferDone) {
  // Arrange: an answer of 100,000 bytes whose frame stays with the peer.
  auto answer = ask_for_a_pulled_answer();
  ASSERT_TRUE(answer);
  ASSERT_FALSE(answer->error) << ferry::render(answer->error);
  // msgpack writes a byte array as its array header and its elements.
  ASSERT_EQ(answer->elements.size(), 1u);
  auto& frames = answer->elements[0].frames;
  ASSERT_EQ(frames.size(), 2u);
  ASSERT_EQ(static_cast<frame_kind>(frames[1].kind), frame_kind::remote_object);
  EXPECT_EQ(frames[1].size, 100000u);
  auto held = peer_link_stats();
  // Act: "rogue" reports the answer taken (credit) but never pulls it nor
  // sends transfer_done.
  send_to_peer(credit{1, uint64_t{1} << 20, 1});
  std::string after;
  for (int i = 0; i < 500; ++i) {
    after = peer_link_stats();
    if (after.find(" transfers=0") != std::string::npos)
      break;
    std::this_thread::sleep_for(20ms);
  }
  // Assert: the peer held the frame until the message was taken, then let
  // it go (it kept it while the link lived before).
  EXPECT_NE(held.find(" transfers=1"), std::string::npos) << held;
  EXPECT_NE(after.find(" transfers=0"), std::string::npos) << after;
}

TEST_F(hostile_fixture_small_pulls, EachByteOfATransferIsServedOnce) {
  // Arrange: an answer of 100,000 bytes whose frame stays with the peer.
  auto answer = ask_for_a_pulled_answer();
  ASSERT_TRUE(answer);
  ASSERT_EQ(answer->elements.size(), 1u);
  ASSERT_EQ(answer->elements[0].frames.size(), 2u);
  auto& frame = answer->elements[0].frames[1];
  ASSERT_EQ(static_cast<frame_kind>(frame.kind), frame_kind::remote_object);
  auto pull = [&](uint64_t offset, uint64_t length) {
    caf::error err;
    (*self_)
      ->request(gateway_, 10s,
                chunk_request{frame.ticket, offset, length, 0, token_})
      .receive([](chunk_reply&) {}, [&](caf::error& x) { err = std::move(x); });
    return err;
  };
  // Act: the first half, the second half, then the first half again (a
  // peer that asks for the same bytes without end, not reading its socket,
  // grew this node's send buffer without bound).
  auto first = pull(0, 50000);
  auto second = pull(50000, 50000);
  auto again = pull(0, 50000);
  // Assert
  EXPECT_FALSE(first) << caf::to_string(first);
  EXPECT_FALSE(second) << caf::to_string(second);
  ASSERT_TRUE(again);
  EXPECT_EQ(again, caf::make_error(ferry::errc::transfer_failed, again.context()));
  EXPECT_TRUE(mentions(again, "100000 bytes were served already"));
}

namespace {

/// A peer that holds at most 8 of "rogue"'s messages unprocessed.
class hostile_fixture_few_held : public hostile_fixture {
protected:
  hostile_fixture_few_held()
    : hostile_fixture({"--ferry.link.max-held-messages=8"}) {
    // nop
  }

  /// Returns the id of the peer's actor exposed as `name` (0: none).
  uint64_t lookup_actor(const std::string& name) {
    uint64_t id = 0;
    (*self_)->request(gateway_, 10s, lookup{name})
      .receive([&](uint64_t x) { id = x; },
               [&](caf::error& err) { ADD_FAILURE() << caf::to_string(err); });
    return id;
  }

  /// A one-way message of byte vector `bin` (msgpack) to actor `target`,
  /// as a node sends it (a raw id of 0 would be urgent: another queue, which
  /// the gate's opening does not look at again).
  static wire_message bytes_to(uint64_t target, std::vector<std::byte> bin) {
    wire_message msg;
    msg.target = target;
    msg.mid = caf::make_message_id().integer_value();
    msg.elements.push_back(element("msgpack", "bytes", std::move(bin)));
    return msg;
  }
};

} // namespace

TEST_F(hostile_fixture_few_held, PeerIgnoringItsCreditIsRefusedBeyondTheHeldLimit) {
  // Arrange: "gate" leaves byte vectors in its mailbox until opened, so
  // every message taken stays held.
  ASSERT_NE(handshake(), 0u);
  auto gate = lookup_actor("gate");
  ASSERT_NE(gate, 0u);
  std::vector<std::byte> four_bytes{std::byte{0xc4}, std::byte{4},
                                    std::byte{1},    std::byte{2},
                                    std::byte{3},    std::byte{4}};
  // Act: 40 one-way messages at once, never waiting for credit.
  for (int i = 0; i < 40; ++i)
    send_to_peer(bytes_to(gate, four_bytes));
  std::vector<caf::error> refused;
  bool done = false;
  (*self_)->receive_while([&] { return !done; })(
    [&](refusal& x) {
      refused.push_back(std::move(x.reason));
      done = refused.size() == 32;
    },
    [&](credit&) {}, caf::after(10s) >> [&] { done = true; });
  auto held = await_peer_stats(" held=8");
  // Assert: the first 8 held, the other 32 refused with a typed error that
  // names both nodes and the setting.
  ASSERT_EQ(refused.size(), 32u);
  for (auto& err : refused) {
    EXPECT_EQ(err, caf::make_error(ferry::errc::receiver_full, err.context()));
    EXPECT_TRUE(mentions(err, "node B holds 8 messages"));
    EXPECT_TRUE(mentions(err, "from node rogue"));
    EXPECT_TRUE(mentions(err, "max-held-messages"));
  }
  EXPECT_NE(held.find(" refusals=32 "), std::string::npos) << held;
  EXPECT_NE(held.find(" held=8"), std::string::npos) << held;
}

TEST_F(hostile_fixture_few_held, OneResponsePerRequestPassesTheHeldLimit) {
  // Arrange: "asker" on the peer sends "rogue" a request; then a message
  // whose byte "rogue" never lets the peer pull, and 7 one-way messages
  // queued behind it: 8 held, the limit.
  ASSERT_NE(handshake(), 0u);
  auto asker = lookup_actor("asker");
  auto gate = lookup_actor("gate");
  ASSERT_NE(asker, 0u);
  ASSERT_NE(gate, 0u);
  wire_message go;
  go.target = asker;
  go.sender = (*self_)->id();
  go.mid = caf::make_message_id().integer_value();
  go.elements.push_back(element("msgpack", "string",
                                {std::byte{0xa2}, std::byte{'g'},
                                 std::byte{'o'}}));
  send_to_peer(std::move(go));
  std::optional<wire_message> request;
  bool done = false;
  (*self_)->receive_while([&] { return !done && !request; })(
    [&](wire_message& x) { request = std::move(x); }, [&](credit&) {},
    caf::after(10s) >> [&] { done = true; });
  ASSERT_TRUE(request) << "asker sent no request";
  ASSERT_TRUE(caf::message_id{request->mid}.is_request());
  // "go" stays held until asker's handler has returned, which may be after
  // its request arrived here: with it, the seventh message would be refused.
  ASSERT_NE(await_peer_stats(" held=0 ").find(" held=0 "), std::string::npos);
  send_to_peer(to_pull(gate, 1, 3));
  for (int i = 0; i < 7; ++i)
    send_to_peer(bytes_to(gate, {std::byte{0xc4}, std::byte{0}}));
  ASSERT_NE(await_peer_stats(" held=8").find(" held=8"), std::string::npos);
  // Act: 20 copies of the response to asker's request.
  for (int i = 0; i < 20; ++i) {
    wire_message answer;
    answer.target = request->sender;
    answer.sender = (*self_)->id();
    answer.mid
      = caf::message_id{request->mid}.response_id().integer_value();
    answer.elements.push_back(element("msgpack", "string",
                                      {std::byte{0xa4}, std::byte{'p'},
                                       std::byte{'o'}, std::byte{'n'},
                                       std::byte{'g'}}));
    send_to_peer(std::move(answer));
  }
  auto stats = await_peer_stats(" refusals=19 ");
  // Assert: one copy taken beyond the limit (every copy was, while the
  // link waited for the pull), the other 19 refused.
  EXPECT_NE(stats.find(" refusals=19 "), std::string::npos) << stats;
  EXPECT_NE(stats.find(" held=9"), std::string::npos) << stats;
}

TEST_F(hostile_fixture_few_held, LinkServesThePeerAgainOnceItsActorsCatchUp) {
  // Arrange: 8 messages held by "gate", a ninth refused.
  ASSERT_NE(handshake(), 0u);
  auto gate = lookup_actor("gate");
  ASSERT_NE(gate, 0u);
  std::vector<std::byte> empty_bin{std::byte{0xc4}, std::byte{0}};
  for (int i = 0; i < 8; ++i)
    send_to_peer(bytes_to(gate, empty_bin));
  ASSERT_NE(await_peer_stats(" held=8").find(" held=8"), std::string::npos);
  auto ninth = send_and_await_error(bytes_to(gate, empty_bin));
  ASSERT_TRUE(ninth) << "the ninth message was taken";
  ASSERT_EQ(ninth, caf::make_error(ferry::errc::receiver_full,
                                   ninth.context()));
  // Act: the gate processes what it holds; then "rogue" asks how many.
  peer_->write_line("open-gate");
  auto drained = await_peer_stats(" held=0");
  wire_message count;
  count.target = gate;
  count.elements.push_back(element(
    "msgpack", "string",
    {std::byte{0xa5}, std::byte{'c'}, std::byte{'o'}, std::byte{'u'},
     std::byte{'n'}, std::byte{'t'}}));
  auto answer = send_and_await_answer(std::move(count));
  // Assert: the 8 held messages were delivered, the refused one was not,
  // and the request was taken (msgpack's 8 is the single byte 0x08).
  EXPECT_NE(drained.find(" held=0"), std::string::npos) << drained;
  ASSERT_TRUE(answer);
  ASSERT_FALSE(answer->error) << ferry::render(answer->error);
  ASSERT_EQ(answer->elements.size(), 1u);
  ASSERT_EQ(answer->elements[0].frames.size(), 1u);
  auto value = answer->elements[0].frames[0].data.bytes();
  ASSERT_EQ(value.size(), 1u);
  EXPECT_EQ(value[0], std::byte{8});
}

TEST_F(hostile_fixture_few_held, SizeClaimThatWouldWrapTheHeldCountIsRefused) {
  // Arrange: "gate" holds one message of "rogue".
  ASSERT_NE(handshake(), 0u);
  auto gate = lookup_actor("gate");
  ASSERT_NE(gate, 0u);
  send_to_peer(bytes_to(gate, {std::byte{0xc4}, std::byte{0}}));
  ASSERT_NE(await_peer_stats(" held=1").find(" held=1"), std::string::npos);
  // Act: a store frame claiming 2^64 - 1 bytes (its wire size saturates
  // there; added to what is held, it would wrap around to a small figure).
  wire_message wild;
  wild.target = gate;
  wild.elements.push_back(described("msgpack", "bytes",
                                    frame_kind::store_object,
                                    {~uint64_t{0}}));
  auto err = send_and_await_error(std::move(wild));
  // Assert: refused for what it would hold, before anything else.
  ASSERT_TRUE(err) << "the message was taken";
  EXPECT_EQ(err, caf::make_error(ferry::errc::receiver_full, err.context()));
}

TEST(unlinked_peer, MessagesWithoutAHandshakeAreDroppedAndLoggedOnceASecond) {
  // Arrange: a ferry node in this process whose log the test reads, and a
  // plain CAF system that reaches its gateway without ferry's handshake.
  struct log_lines {
    std::mutex mtx;
    std::vector<std::string> lines;
  };
  auto log = std::make_shared<log_lines>();
  ferry::node_config cfg;
  cfg.node_name = "A";
  cfg.store_enabled = false;
  cfg.log_sink = [log](const std::string& line) {
    std::lock_guard<std::mutex> guard{log->mtx};
    log->lines.push_back(line);
  };
  auto node = ferry::node::start(cfg);
  ASSERT_TRUE(node) << ferry::render(node.error());
  auto sink = (*node)->system().spawn([]() -> caf::behavior {
    return {[](const std::string&) {}};
  });
  auto port = (*node)->publish(sink);
  ASSERT_TRUE(port) << ferry::render(port.error());
  caf::actor_system_config rogue_cfg;
  rogue_cfg.load<caf::io::middleman>();
  register_wire_types(rogue_cfg);
  caf::actor_system rogue{rogue_cfg};
  auto gateway = rogue.middleman().remote_actor("127.0.0.1", *port);
  ASSERT_TRUE(gateway) << rogue.render(gateway.error());
  // Act: 50 wire messages at once, then a string the gateway answers (a
  // lookup), which shows that the node got through all of them.
  auto started = std::chrono::steady_clock::now();
  caf::scoped_actor self{rogue};
  for (int i = 0; i < 50; ++i)
    self->send(*gateway, wire_message{});
  bool answered = false;
  self->request(*gateway, 10s, lookup{"nobody"})
    .receive([&](uint64_t) { answered = true; },
             [&](caf::error&) { answered = true; });
  auto took = std::chrono::steady_clock::now() - started;
  // Assert: the node lives on and logged one line per second at most,
  // naming the sender's node and the fix.
  EXPECT_TRUE(answered);
  std::vector<std::string> dropped;
  {
    std::lock_guard<std::mutex> guard{log->mtx};
    for (auto& line : log->lines)
      if (line.find("dropped a message") != std::string::npos)
        dropped.push_back(line);
  }
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(took).count();
  ASSERT_GE(dropped.size(), 1u);
  EXPECT_LE(dropped.size(), static_cast<size_t>(1 + seconds));
  EXPECT_NE(dropped[0].find("skipped ferry's handshake"), std::string::npos)
    << dropped[0];
  caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
}
