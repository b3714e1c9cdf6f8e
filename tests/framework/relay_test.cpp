// The parts of relaying a store object among its receivers: the hint a
// frame carries (wire/relay_hint), the owner's directory of who got which
// object (link/relay_directory), and a receiver's sources of the objects
// it relays (transfer/relay_source, transfer/relay_sources).
//
// The directory chains the receivers (each is told the one before it),
// never names a node to itself, and keeps an object's entry while a
// transfer holds it and for its linger after. A source answers a range
// that has landed at once, parks a request for bytes still on their way
// until they land, refuses ranges outside the object, chunks too large and
// a node asking for more than the object's size, and answers waiting and
// later requests with the reason when its pull fails.
#include "transfer/landing_buffer.hpp"
#include "transfer/relay_directory.hpp"
#include "transfer/relay_source.hpp"
#include "transfer/relay_sources.hpp"
#include "wire/relay_hint.hpp"

#include "ferry/errc.hpp"
#include "ferry/test/mentions.hpp"

#include "ferry/store/object_store.hpp"

#include "store_test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

using namespace ferry::detail;
using ferry::test::mentions;

namespace {

/// The replies a source sent, in order.
struct replies {
  std::vector<caf::expected<chunk_reply>> got;

  relay_source::reply_fn sink() {
    return [this](caf::expected<chunk_reply> x) {
      got.emplace_back(std::move(x));
    };
  }
};

/// 64 bytes 0, 1, 2, ...
std::vector<std::byte> object_bytes() {
  std::vector<std::byte> result(64);
  for (size_t i = 0; i < result.size(); ++i)
    result[i] = static_cast<std::byte>(i);
  return result;
}

/// A 64-byte object landing in a store, as the puller pulls a store handle,
/// with its relay source; `bytes` have landed in it (not yet reported).
struct landing_object {
  ferry::store::test::store_cleanup cleanup{
    ferry::store::test::small_config("relay")};
  std::optional<ferry::store::object_store> store;
  std::shared_ptr<landing_buffer> buffer;
  std::shared_ptr<relay_source> source;

  /// Returns an error's text when the store or object cannot be made.
  std::string make(std::span<const std::byte> bytes) {
    auto st = ferry::store::object_store::attach(cleanup.cfg);
    if (!st)
      return ferry::render(st.error());
    store = std::move(*st);
    auto object = store->create(bytes.size());
    if (!object)
      return ferry::render(object.error());
    buffer = std::make_shared<landing_buffer>(std::move(*object));
    source = std::make_shared<relay_source>(buffer->object_bytes(), buffer,
                                            "owner", "relay", bytes.size());
    return buffer->land(0, bytes) ? "" : "the bytes do not fit";
  }

  /// Ends the pull: seals the object, tells the source, and lets the
  /// landing buffer go. Returns the receiver's handle of the object.
  auto seal() {
    auto ref = buffer->seal();
    if (ref) {
      source->sealed(*ref, *store);
      buffer.reset();
    }
    return ref;
  }
};

std::shared_ptr<relay_source> make_source(std::span<const std::byte> bytes) {
  return std::make_shared<relay_source>(bytes, nullptr, "owner", "relay",
                                        16);
}

} // namespace

// -- relay_hint ---------------------------------------------------------------

TEST(relay_hint, KeyAndNodeNameComeBackFromTheFramesData) {
  // Arrange
  relay_hint hint{0x0123456789abcdefull, "node-b"};
  // Act
  auto data = encode_relay_hint(hint);
  auto back = decode_relay_hint(data);
  // Assert
  ASSERT_TRUE(back);
  EXPECT_EQ(back->key, hint.key);
  EXPECT_EQ(back->from, "node-b");
  EXPECT_EQ(data.size(), 8u + 6u);
}

TEST(relay_hint, DataThatIsNoHintReadsAsNone) {
  // Arrange
  auto zero_key = encode_relay_hint(relay_hint{0, "b"});
  auto long_name = encode_relay_hint(
    relay_hint{1, std::string(max_relay_name + 1, 'x')});
  std::vector<std::byte> short_data(7, std::byte{1});
  // Act / Assert
  EXPECT_FALSE(decode_relay_hint({}));
  EXPECT_FALSE(decode_relay_hint(short_data));
  EXPECT_FALSE(decode_relay_hint(zero_key));
  EXPECT_FALSE(decode_relay_hint(long_name));
}

// -- relay_directory ----------------------------------------------------------

TEST(relay_directory, ReceiversOfOneObjectFormAChain) {
  // Arrange
  relay_directory sut;
  // Act
  auto to_b = sut.offer(7, "B");
  auto to_c = sut.offer(7, "C");
  auto to_d = sut.offer(7, "D");
  // Assert: one key for the object; B pulls from the owner, C from B, D
  // from C.
  EXPECT_NE(to_b.hint.key, 0u);
  EXPECT_EQ(to_c.hint.key, to_b.hint.key);
  EXPECT_EQ(to_d.hint.key, to_b.hint.key);
  EXPECT_EQ(to_b.hint.from, "");
  EXPECT_EQ(to_c.hint.from, "B");
  EXPECT_EQ(to_d.hint.from, "C");
}

TEST(relay_directory, ObjectsHaveKeysOfTheirOwnAndNoNodeIsToldItself) {
  // Arrange
  relay_directory sut;
  // Act
  auto first = sut.offer(7, "B");
  auto again = sut.offer(7, "B");
  auto other = sut.offer(8, "C");
  // Assert
  EXPECT_EQ(again.hint.from, "");
  EXPECT_EQ(again.hint.key, first.hint.key);
  EXPECT_NE(other.hint.key, first.hint.key);
  EXPECT_EQ(other.hint.from, "");
}

TEST(relay_directory, EntryOutlivesItsLastTransferByItsLingerOnly) {
  // Arrange: a linger of 5 s on a manual clock.
  ferry::detail::manual_clock time;
  relay_directory sut{std::chrono::seconds{5}, time};
  auto held = sut.offer(7, "B");
  auto released = sut.offer(7, "C");
  released.lease.reset();
  time.advance(std::chrono::seconds{6});
  // Act: a transfer still holds the entry.
  auto while_held = sut.offer(7, "D");
  held.lease.reset();
  while_held.lease.reset();
  time.advance(std::chrono::seconds{4});
  auto within_linger = sut.offer(7, "E");
  within_linger.lease.reset();
  time.advance(std::chrono::seconds{6});
  auto after = sut.offer(7, "F");
  // Assert: the chain goes on while held and within the linger; once every
  // transfer ended and the linger is over, nobody is named (they let the
  // object go by now).
  EXPECT_EQ(while_held.hint.from, "C");
  EXPECT_EQ(within_linger.hint.from, "D");
  EXPECT_EQ(after.hint.from, "");
}

// -- relay_source -------------------------------------------------------------

TEST(relay_source, RangeThatLandedIsAnsweredAtOnceWithItsBytes) {
  // Arrange
  auto bytes = object_bytes();
  auto sut = make_source(bytes);
  replies out;
  sut->landed(0, 16);
  // Act
  sut->serve("C", 4, 8, 99, out.sink());
  // Assert
  ASSERT_EQ(out.got.size(), 1u);
  ASSERT_TRUE(out.got[0]) << ferry::render(out.got[0].error());
  EXPECT_EQ(out.got[0]->request, 99u);
  auto got = out.got[0]->data.bytes();
  ASSERT_EQ(got.size(), 8u);
  EXPECT_EQ(got[0], std::byte{4});
  EXPECT_EQ(got[7], std::byte{11});
}

TEST(relay_source, RequestForBytesOnTheirWayWaitsUntilTheyLand) {
  // Arrange
  auto bytes = object_bytes();
  auto sut = make_source(bytes);
  replies out;
  sut->landed(0, 8);
  // Act: bytes 8 to 24 come in two chunks, in reverse order.
  sut->serve("C", 8, 16, 1, out.sink());
  auto before = out.got.size();
  sut->landed(16, 8);
  auto halfway = out.got.size();
  sut->landed(8, 8);
  // Assert
  EXPECT_EQ(before, 0u);
  EXPECT_EQ(halfway, 0u);
  ASSERT_EQ(out.got.size(), 1u);
  ASSERT_TRUE(out.got[0]);
  EXPECT_EQ(out.got[0]->data.bytes()[0], std::byte{8});
}

TEST(relay_source, RangesOutsideTheObjectAndChunksTooLargeAreRefused) {
  // Arrange
  auto bytes = object_bytes();
  auto sut = make_source(bytes);
  replies out;
  sut->landed(0, 64);
  // Act
  sut->serve("C", 60, 8, 1, out.sink());
  sut->serve("C", 0, 32, 2, out.sink()); // above the 16-byte max chunk
  sut->serve("C", 0, 0, 3, out.sink());
  // Assert
  ASSERT_EQ(out.got.size(), 3u);
  EXPECT_TRUE(mentions(out.got[0].error(), "holds 64 bytes"));
  EXPECT_TRUE(mentions(out.got[1].error(), "chunk-size"));
  EXPECT_FALSE(out.got[2]);
}

TEST(relay_source, NodeIsServedTheObjectsSizeAtMost) {
  // Arrange
  auto bytes = object_bytes();
  auto sut = make_source(bytes);
  replies out;
  sut->landed(0, 64);
  // Act: C asks for every byte, then for the first chunk again; D asks too.
  for (uint64_t offset = 0; offset < 64; offset += 16)
    sut->serve("C", offset, 16, offset, out.sink());
  sut->serve("C", 0, 16, 100, out.sink());
  sut->serve("D", 0, 16, 101, out.sink());
  // Assert
  ASSERT_EQ(out.got.size(), 6u);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_TRUE(out.got[i]);
  ASSERT_FALSE(out.got[4]);
  EXPECT_TRUE(mentions(out.got[4].error(), "each chunk once"));
  EXPECT_TRUE(out.got[5]);
}

TEST(relay_source, FailedPullAnswersWaitingAndLaterRequestsWithItsReason) {
  // Arrange
  auto bytes = object_bytes();
  auto sut = make_source(bytes);
  replies out;
  sut->serve("C", 0, 16, 1, out.sink());
  // Act
  auto took = sut->failed(caf::make_error(ferry::errc::link_down, "gone"));
  sut->serve("C", 16, 16, 2, out.sink());
  // Assert
  EXPECT_TRUE(took);
  ASSERT_EQ(out.got.size(), 2u);
  ASSERT_FALSE(out.got[0]);
  EXPECT_TRUE(mentions(out.got[0].error(), "gave up pulling"));
  EXPECT_TRUE(mentions(out.got[0].error(), "owner"));
  ASSERT_FALSE(out.got[1]);
  EXPECT_TRUE(mentions(out.got[1].error(), "its own pull failed"));
}

TEST(relay_source, RequestsWaitingBeyondTheBoundAreRefused) {
  // Arrange
  std::vector<std::byte> bytes(relay_source::max_parked * 16 + 16);
  auto sut = std::make_shared<relay_source>(std::span{bytes}, nullptr,
                                            "owner", "relay", 16);
  replies out;
  // Act
  for (size_t i = 0; i <= relay_source::max_parked; ++i)
    sut->serve("C", i * 16, 16, i + 1, out.sink());
  // Assert: the one beyond the bound is refused at once; the others wait.
  ASSERT_EQ(out.got.size(), 1u);
  EXPECT_TRUE(mentions(out.got[0].error(), "wait for bytes not yet landed"));
}

// -- relay_sources ------------------------------------------------------------

TEST(relay_sources, RequestWaitsForAKeyOpenedAfterIt) {
  // Arrange: the node before asks before this node's pull began.
  auto bytes = object_bytes();
  relay_sources sut{"relay"};
  replies out;
  sut.serve(relay_request{1, 42, 0, 16}, "C", out.sink());
  auto before = out.got.size();
  // Act
  auto source = sut.open(42, bytes, nullptr, "owner", 16);
  source->landed(0, 16);
  // Assert
  EXPECT_EQ(before, 0u);
  ASSERT_EQ(out.got.size(), 1u);
  ASSERT_TRUE(out.got[0]);
  EXPECT_EQ(out.got[0]->request, 1u);
}

TEST(relay_sources, RequestForAKeyNeverOpenedIsRefusedAfterItsGrace) {
  // Arrange: a grace of 200 ms on a manual clock.
  ferry::detail::manual_clock time;
  relay_sources sut{"relay", std::chrono::seconds{5},
                    std::chrono::milliseconds{200}, time};
  std::vector<std::chrono::steady_clock::duration> timers;
  sut.set_timer([&](auto delay) { timers.push_back(delay); });
  replies out;
  sut.serve(relay_request{1, 42, 0, 16}, "C", out.sink());
  time.advance(std::chrono::milliseconds{199});
  sut.expire();
  auto before = out.got.size();
  time.advance(std::chrono::milliseconds{1});
  // Act
  sut.expire();
  // Assert: the timer was asked to wake the expiry.
  EXPECT_EQ(before, 0u);
  EXPECT_EQ(timers.size(), 1u);
  ASSERT_EQ(out.got.size(), 1u);
  ASSERT_FALSE(out.got[0]);
  EXPECT_TRUE(mentions(out.got[0].error(), "pull it from its owner"));
}

TEST(relay_sources, UnknownKeyIsAnsweredAtOnceWithoutGrace) {
  // Arrange
  relay_sources sut{"relay", std::chrono::seconds{5},
                    std::chrono::seconds{0}};
  replies out;
  // Act
  sut.serve(relay_request{1, 42, 0, 16}, "C", out.sink());
  // Assert
  ASSERT_EQ(out.got.size(), 1u);
  ASSERT_FALSE(out.got[0]);
  EXPECT_TRUE(mentions(out.got[0].error(), "pull it from its owner"));
}

TEST(relay_sources, KeyIsServedByTheFirstPullAndForgottenWhenItFails) {
  // Arrange
  auto bytes = object_bytes();
  relay_sources sut{"relay"};
  auto first = sut.open(42, bytes, nullptr, "owner", 16);
  auto second = sut.open(42, bytes, nullptr, "owner", 16);
  replies out;
  first->landed(0, 16);
  // Act
  sut.serve(relay_request{1, 42, 0, 16}, "C", out.sink());
  sut.close(42, first, caf::make_error(ferry::errc::link_down, "gone"));
  sut.serve(relay_request{2, 42, 16, 16}, "C", out.sink());
  // Assert: a key let go is refused at once, without waiting.
  ASSERT_TRUE(first);
  EXPECT_FALSE(second);
  ASSERT_EQ(out.got.size(), 2u);
  EXPECT_TRUE(out.got[0]);
  ASSERT_FALSE(out.got[1]);
  EXPECT_TRUE(mentions(out.got[1].error(), "pull it from its owner"));
  EXPECT_EQ(sut.size(), 0u);
}

TEST(relay_sources, SweepForgetsASealedObjectOnlyAfterItsLinger) {
  // Arrange: an object sealed in a store, relayed with a linger of 5 s.
  ferry::detail::manual_clock time;
  relay_sources sut{"relay", std::chrono::seconds{5},
                    relay_sources::default_grace, time};
  auto bytes = object_bytes();
  landing_object landing;
  ASSERT_EQ(landing.make(bytes), "");
  auto source = sut.open(42, landing.buffer->object_bytes(), landing.buffer,
                         "owner", 64);
  ASSERT_TRUE(source);
  source->landed(0, bytes.size());
  auto ref = landing.buffer->seal();
  ASSERT_TRUE(ref) << ferry::render(ref.error());
  source->sealed(*ref, *landing.store);
  // Act
  time.advance(std::chrono::seconds{4});
  sut.sweep();
  auto within = sut.size();
  time.advance(std::chrono::seconds{2});
  sut.sweep();
  // Assert
  EXPECT_EQ(within, 1u);
  EXPECT_EQ(sut.size(), 0u);
}

TEST(relay_sources, SweepKeepsObjectsStillLanding) {
  // Arrange: no linger at all.
  auto bytes = object_bytes();
  relay_sources sut{"relay", std::chrono::nanoseconds{0}};
  auto source = sut.open(42, bytes, nullptr, "owner", 16);
  // Act
  sut.sweep();
  // Assert: not sealed yet, so not idle.
  EXPECT_EQ(sut.size(), 1u);
}

TEST(relay_source, SealedObjectIsServedWhileItsHostHoldsItAndNoLonger) {
  // Arrange: an object landing in a store, as the puller pulls it; one
  // request made while it lands, one waiting for its last bytes.
  auto bytes = object_bytes();
  landing_object landing;
  ASSERT_EQ(landing.make(bytes), "");
  auto& store = landing.store;
  auto& sut = landing.source;
  replies out;
  sut->landed(0, 32);
  sut->serve("C", 0, 32, 1, out.sink());
  sut->serve("C", 32, 32, 2, out.sink());
  // Act: the pull ends; a request while the receiver holds the object;
  // the receiver and the puller let it go; another request.
  auto ref = landing.seal();
  ASSERT_TRUE(ref) << ferry::render(ref.error());
  auto id = ref->id();
  sut->serve("D", 0, 64, 3, out.sink());
  ref = caf::error{};
  auto freed_while_replies_live = !store->get(id);
  std::vector<std::vector<std::byte>> served;
  for (auto& x : out.got)
    if (x)
      served.emplace_back(x->data.bytes().begin(), x->data.bytes().end());
  out.got.clear(); // the replies are written: they let the object go
  auto freed = !store->get(id);
  sut->serve("E", 0, 64, 4, out.sink());
  // Assert: the replies held the object until written; the source kept
  // nothing alive, and answers the last request with the reason.
  ASSERT_EQ(served.size(), 3u);
  EXPECT_EQ(served[0], std::vector<std::byte>(bytes.begin(), bytes.begin() + 32));
  EXPECT_EQ(served[1], std::vector<std::byte>(bytes.begin() + 32, bytes.end()));
  EXPECT_EQ(served[2], bytes);
  EXPECT_FALSE(freed_while_replies_live);
  EXPECT_TRUE(freed);
  ASSERT_EQ(out.got.size(), 1u);
  ASSERT_FALSE(out.got[0]);
  EXPECT_TRUE(mentions(out.got[0].error(), "no longer holds"));
}

TEST(relay_source, SealedObjectIsHeldForANodeStillPullingItUntilItAskedForAll) {
  // Arrange: C pulls the first half from here while the object lands.
  auto bytes = object_bytes();
  landing_object landing;
  ASSERT_EQ(landing.make(bytes), "");
  auto& store = landing.store;
  auto& sut = landing.source;
  replies out;
  sut->landed(0, 64);
  sut->serve("C", 0, 32, 1, out.sink());
  // Act: the pull ends and this host's receiver lets the object go at once;
  // then C asks for the second half.
  auto ref = landing.seal();
  ASSERT_TRUE(ref) << ferry::render(ref.error());
  auto id = ref->id();
  ref = caf::error{};
  out.got.clear();
  auto held_for_c = static_cast<bool>(store->get(id));
  sut->serve("C", 32, 32, 2, out.sink());
  ASSERT_EQ(out.got.size(), 1u);
  ASSERT_TRUE(out.got[0]) << ferry::render(out.got[0].error());
  std::vector<std::byte> second{out.got[0]->data.bytes().begin(),
                                out.got[0]->data.bytes().end()};
  out.got.clear();
  auto freed_after = !store->get(id);
  // Assert: held while C still pulled, let go once C asked for every byte.
  EXPECT_TRUE(held_for_c);
  EXPECT_EQ(second, std::vector<std::byte>(bytes.begin() + 32, bytes.end()));
  EXPECT_TRUE(freed_after);
}
