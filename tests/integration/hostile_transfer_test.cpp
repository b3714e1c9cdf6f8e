// Large frames that stay with a hostile sender until pulled, and the
// receiver pulling them: answers naming a request the receiver never made,
// chunks of another length than asked, frame sizes that wrap around, a
// claimed frame whose chunks never come, thousands of messages queued
// behind a pull that fails, a store ticket from another host; and the
// receiver serving its own pulled frames to a peer that never says it is
// done, asks for the same bytes again or for ranges that wrap around,
// releases transfers it never had, or asks for transfers and relay keys it
// was never given. Answers are matched by request id on the link: one that
// names no request lands nowhere and is counted; each pull ends in the
// whole frame, a typed error or a release; memory follows the chunks asked
// for, not the sizes claimed; and the link goes on.
#include "hostile_peer.hpp"

#include "ferry/errc.hpp"
#include "ferry/test/test_bytes.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

using namespace std::chrono_literals;
using namespace ferry::detail;
using ferry::test::hostile_fixture;
using ferry::test::mentions;

namespace {

/// The bytes of a `chunk` frame "rogue" received (after its request id).
std::span<const std::byte> chunk_data(const ferry::test::received& x) {
  return std::span{x.body}.subspan(wire::chunk_prefix);
}

/// The request id a `chunk` frame "rogue" received answers.
uint64_t chunk_request_id(const ferry::test::received& x) {
  uint64_t result = 0;
  std::memcpy(&result, x.body.data(), sizeof(result));
  return result;
}

/// A peer that pulls large frames in chunks of 64 KiB.
class hostile_fixture_small_chunks : public hostile_fixture {
protected:
  static constexpr uint64_t chunk = 64 * 1024;

  hostile_fixture_small_chunks()
    : hostile_fixture({"--ferry.link.chunk-size=65536"}) {
    // nop
  }

  /// A request from "rogue" to actor `target` for the hash of a byte
  /// vector of `size` bytes (msgpack bin 32: its 5-byte header inline, the
  /// bytes a frame that stays with "rogue" as transfer `ticket`).
  static wire_message pulled_bytes(uint64_t target, uint64_t ticket,
                                   uint64_t size) {
    auto el = described("msgpack", "bytes", frame_kind::remote_object,
                        {5, size});
    el.frames[0].kind = static_cast<uint8_t>(frame_kind::inline_plain);
    el.frames[0].data = wire_bytes{std::vector<std::byte>{
      std::byte{0xc6}, static_cast<std::byte>(size >> 24),
      static_cast<std::byte>(size >> 16), static_cast<std::byte>(size >> 8),
      static_cast<std::byte>(size)}};
    el.frames[1].ticket = ticket;
    wire_message msg;
    msg.target = target;
    msg.sender = rogue_actor;
    msg.mid = (uint64_t{1} << 60) | 43; // a request id
    msg.elements.push_back(std::move(el));
    return msg;
  }

  /// Returns the next chunk request of the peer for transfer `transfer`,
  /// skipping those for other transfers.
  std::optional<chunk_request> next_chunk_request(uint64_t transfer) {
    for (;;) {
      auto x = conn_->next_of(wire::frame_type::chunk_request);
      if (!x)
        return std::nullopt;
      auto req = x->as<chunk_request>();
      if (req && req->transfer == transfer)
        return req;
    }
  }

  /// Returns the next message the peer sends "rogue" (an answer), noting
  /// the transfers it releases on the way in `released`.
  std::optional<wire_message> await_answer(std::vector<uint64_t>& released) {
    for (;;) {
      auto x = conn_->next();
      if (!x)
        return std::nullopt;
      if (auto done = x->as<transfer_done>())
        released.push_back(done->transfer);
      else if (x->type == wire::frame_type::message)
        return std::move(x->msg);
    }
  }

  /// Returns the unsigned integer a one-frame msgpack answer holds.
  static std::optional<uint64_t> unsigned_in(const wire_message& answer) {
    if (answer.elements.size() != 1 || answer.elements[0].frames.size() != 1)
      return std::nullopt;
    auto bytes = answer.elements[0].frames[0].data.bytes();
    if (bytes.empty())
      return std::nullopt;
    auto tag = std::to_integer<uint8_t>(bytes[0]);
    if (tag < 0x80)
      return tag;
    size_t width = tag == 0xcc ? 1 : tag == 0xcd ? 2 : tag == 0xce ? 4
                                   : tag == 0xcf ? 8 : 0;
    if (width == 0 || bytes.size() != 1 + width)
      return std::nullopt;
    uint64_t result = 0;
    for (size_t i = 1; i <= width; ++i)
      result = (result << 8) | std::to_integer<uint8_t>(bytes[i]);
    return result;
  }
};

} // namespace

TEST_F(hostile_fixture_small_chunks, AnswerNamingNoRequestLandsNowhereAndThePullCompletes) {
  // Arrange: a frame of four chunks, all four asked for at once.
  auto target = handshake();
  ASSERT_NE(target, 0u);
  auto data = ferry::test::make_bytes(4 * chunk);
  conn_->send_message(pulled_bytes(target, 7, data.size()));
  std::vector<chunk_request> asked;
  while (asked.size() < 4) {
    auto req = next_chunk_request(7);
    if (!req)
      break;
    asked.push_back(*req);
  }
  ASSERT_EQ(asked.size(), 4u) << "the peer did not pull the frame";
  // Act: a chunk of the right length naming a request id the peer never
  // used, then the right answers, the last request's first.
  conn_->send(chunk_frame(~uint64_t{0},
                          std::vector<std::byte>(chunk, std::byte{0xee}),
                          nullptr));
  for (auto i = asked.rbegin(); i != asked.rend(); ++i)
    conn_->send(chunk_frame(
      i->request, std::span{data}.subspan(i->offset, i->length), nullptr));
  std::vector<uint64_t> released;
  auto answer = await_answer(released);
  auto stats = await_peer_stats(" unasked=1 ");
  // Assert: the echo actor got the frame's own bytes (its hash), the peer
  // released the transfer, and counted the stray answer.
  ASSERT_TRUE(answer) << "no answer to the message";
  ASSERT_FALSE(answer->error) << ferry::render(answer->error);
  auto hash = unsigned_in(*answer);
  ASSERT_TRUE(hash) << "the answer holds no unsigned integer";
  EXPECT_EQ(*hash, ferry::test::fnv1a(data));
  EXPECT_EQ(released, std::vector<uint64_t>{7});
  EXPECT_NE(stats.find(" unasked=1 "), std::string::npos) << stats;
  EXPECT_NE(stats.find(" refusals=0 "), std::string::npos) << stats;
}

TEST_F(hostile_fixture_small_chunks, ChunksOfAnotherLengthThanAskedAreRefusedAndReleased) {
  // Arrange
  auto target = handshake();
  ASSERT_NE(target, 0u);
  std::vector<caf::error> errors;
  std::vector<std::vector<uint64_t>> releases;
  // Act: two messages to pull; the first chunk asked of each is answered
  // with one byte less, then one byte more, than asked for.
  for (auto [ticket, extra] : {std::pair{uint64_t{11}, -1},
                               std::pair{uint64_t{12}, 1}}) {
    conn_->send_message(pulled_bytes(target, ticket, 4 * chunk));
    auto req = next_chunk_request(ticket);
    ASSERT_TRUE(req) << "the peer did not pull transfer " << ticket;
    auto length = static_cast<size_t>(static_cast<int64_t>(req->length)
                                      + extra);
    conn_->send(chunk_frame(req->request,
                            std::vector<std::byte>(length, std::byte{1}),
                            nullptr));
    std::vector<uint64_t> released;
    auto answer = await_answer(released);
    errors.push_back(answer ? answer->error : caf::error{});
    releases.push_back(std::move(released));
  }
  auto next_err = send_and_await_error(refused_for_its_family(target));
  // Assert: each message refused with a typed error naming both lengths,
  // its transfer released; the link reads on.
  ASSERT_EQ(errors.size(), 2u);
  for (auto& err : errors)
    EXPECT_EQ(err, caf::make_error(ferry::errc::transfer_failed,
                                   err.context()))
      << ferry::render(err);
  EXPECT_TRUE(mentions(errors[0],
                       "sent a chunk of 65535 bytes for a request of 65536"));
  EXPECT_TRUE(mentions(errors[1],
                       "sent a chunk of 65537 bytes for a request of 65536"));
  EXPECT_EQ(releases[0], std::vector<uint64_t>{11});
  EXPECT_EQ(releases[1], std::vector<uint64_t>{12});
  EXPECT_EQ(next_err,
            caf::make_error(ferry::errc::family_refused, next_err.context()));
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

TEST_F(hostile_fixture, ThousandsOfMessagesEndingAtOnceBehindAFailedPullCostNoStack) {
  // Arrange: a message with one byte to pull, whose chunk "rogue" holds
  // back, and 15,000 one-way messages queued behind it, each with an empty
  // frame to pull: once the first ends, each of them ends at once (nothing
  // to pull, then refused). Taken one after the other by recursion (some
  // 700 bytes of stack per message in a release build), 15,000 would
  // overflow the worker's 8 MiB stack and end the node.
  auto target = handshake();
  ASSERT_NE(target, 0u);
  conn_->send_message(to_pull(target, 1, 5));
  const size_t queued = 15000;
  for (size_t i = 0; i < queued; ++i)
    conn_->send_message(to_pull(target, 0, 0));
  auto asked = conn_->next_of(wire::frame_type::chunk_request);
  ASSERT_TRUE(asked) << "the peer did not pull the first message";
  auto req = asked->as<chunk_request>();
  ASSERT_TRUE(req);
  // Act: "rogue" answers that the chunk failed; every queued message ends
  // right after.
  conn_->send_control(failed_answer{req->request, caf::sec::request_timeout});
  std::vector<caf::error> reasons;
  while (reasons.size() < queued + 1) {
    auto x = conn_->next_of(wire::frame_type::refusal, 20s);
    if (!x)
      break;
    if (auto notice = x->as<refusal>())
      reasons.push_back(std::move(notice->reason));
  }
  auto next_err = send_and_await_error(refused_for_its_family(target));
  // Assert: every message refused, the first for its failed pull, and the
  // node still answers.
  ASSERT_EQ(reasons.size(), queued + 1);
  EXPECT_EQ(reasons[0], caf::make_error(ferry::errc::transfer_failed,
                                        reasons[0].context()));
  EXPECT_TRUE(mentions(reasons[0], "answered a chunk request with an error"));
  EXPECT_EQ(next_err,
            caf::make_error(ferry::errc::family_refused, next_err.context()));
}

namespace {

/// The resident memory of process `pid` in MiB (from /proc), -1 if unread.
long resident_mib(pid_t pid) {
  std::ifstream status{"/proc/" + std::to_string(pid) + "/status"};
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stol(line.substr(6)) / 1024;
  return -1;
}

} // namespace

TEST_F(hostile_fixture, ClaimedFrameTakesMemoryOnlyAsItsChunksAreAskedFor) {
  // Arrange: a message claiming a 2 GiB frame to pull (within the default
  // max-message-size of 16 GiB) whose chunks "rogue" never sends. A
  // receiver that zero-filled the whole frame before asking for its first
  // chunk would commit 2 GiB for some 60 bytes.
  auto target = handshake();
  ASSERT_NE(target, 0u);
  auto before = resident_mib(peer_->pid());
  ASSERT_GT(before, 0);
  // Act
  conn_->send_message(to_pull(target, uint64_t{2} << 30, 5));
  std::vector<chunk_request> pending;
  while (pending.size() < 4) {
    auto x = conn_->next_of(wire::frame_type::chunk_request);
    if (!x)
      break;
    if (auto req = x->as<chunk_request>())
      pending.push_back(*req);
  }
  auto during = resident_mib(peer_->pid());
  for (auto& req : pending)
    conn_->send_control(failed_answer{req.request, caf::sec::request_timeout});
  auto refused = conn_->next_of(wire::frame_type::refusal);
  // The peer lets go of what the message held before it sends the refusal,
  // so the next message finds nothing held.
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
    << ferry::render(next_err);
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

TEST_F(hostile_fixture, ChunkRequestForATransferNeverHeldIsAnsweredFailed) {
  // Arrange: a link on which the peer holds nothing for "rogue".
  ASSERT_NE(handshake(), 0u);
  // Act
  auto answer = ask(chunk_request{21, 4242, 0, 16});
  // Assert: a failed answer naming the request, and no bytes.
  ASSERT_TRUE(answer) << "no answer to the chunk request";
  auto failed = answer->as<failed_answer>();
  ASSERT_TRUE(failed) << wire::name_of(answer->type);
  EXPECT_EQ(failed->request, 21u);
  EXPECT_EQ(failed->reason, caf::make_error(ferry::errc::transfer_failed,
                                            failed->reason.context()));
  EXPECT_TRUE(mentions(failed->reason, "holds no transfer 4242"));
}

TEST_F(hostile_fixture, RelayRequestForAKeyNeverGivenIsAnsweredFailed) {
  // Arrange: a linked peer that was never sent a store object.
  ASSERT_NE(handshake(), 0u);
  // Act: a guessed relay key.
  auto answer = ask(relay_request{22, 0x5eed, 0, 4096});
  auto link = peer_link_stats();
  // Assert: refused with the reason and no bytes, and the link goes on.
  ASSERT_TRUE(answer) << "no answer to the relay request";
  auto failed = answer->as<failed_answer>();
  ASSERT_TRUE(failed) << wire::name_of(answer->type);
  EXPECT_EQ(failed->request, 22u);
  EXPECT_EQ(failed->reason, caf::make_error(ferry::errc::transfer_failed,
                                            failed->reason.context()));
  EXPECT_TRUE(mentions(failed->reason, "pull it from its owner"));
  EXPECT_NE(link, "");
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
  /// and returns the frame of its answer that stays with the peer to be
  /// pulled (msgpack writes the byte array as its header and its bytes).
  std::optional<wire_frame> ask_for_a_pulled_answer() {
    auto target = handshake();
    EXPECT_NE(target, 0u);
    wire_message msg;
    msg.target = target;
    msg.elements.push_back(element("msgpack", "u64",
                                   {std::byte{0xce}, std::byte{0x00},
                                    std::byte{0x01}, std::byte{0x86},
                                    std::byte{0xa0}}));
    msg.elements.push_back(element("msgpack", "i32", {std::byte{0x07}}));
    auto answer = send_and_await_answer(std::move(msg));
    if (!answer || answer->error || answer->elements.size() != 1
        || answer->elements[0].frames.size() != 2) {
      ADD_FAILURE() << "no answer of one element of two frames";
      return std::nullopt;
    }
    auto& frame = answer->elements[0].frames[1];
    EXPECT_EQ(static_cast<frame_kind>(frame.kind), frame_kind::remote_object);
    EXPECT_EQ(frame.size, 100000u);
    return frame;
  }

  /// Asks the peer for `length` bytes at `offset` of transfer `transfer`;
  /// returns its answer.
  std::optional<ferry::test::received> pull(uint64_t transfer,
                                            uint64_t offset,
                                            uint64_t length) {
    return ask(chunk_request{next_request_++, transfer, offset, length});
  }

  /// The id of "rogue"'s next request.
  uint64_t next_request_ = 1;
};

} // namespace

TEST_F(hostile_fixture_small_pulls, FramesOfATakenMessageAreReleasedWithoutTransferDone) {
  // Arrange: an answer of 100,000 bytes whose frame stays with the peer.
  auto frame = ask_for_a_pulled_answer();
  ASSERT_TRUE(frame);
  auto held = peer_link_stats();
  // Act: "rogue" reports the answer taken (credit) but never pulls it nor
  // sends transfer_done.
  conn_->send_control(credit{1, uint64_t{1} << 20, 1});
  auto after = await_peer_stats(" transfers=0 ");
  // Assert: the peer held the frame until the message was taken, then let
  // it go (not only once the link goes down).
  EXPECT_NE(held.find(" transfers=1 "), std::string::npos) << held;
  EXPECT_NE(after.find(" transfers=0 "), std::string::npos) << after;
}

TEST_F(hostile_fixture_small_pulls, EachByteOfATransferIsServedOnce) {
  // Arrange: an answer of 100,000 bytes whose frame stays with the peer.
  auto frame = ask_for_a_pulled_answer();
  ASSERT_TRUE(frame);
  // Act: the first half, the second half, then the first half again (a
  // peer that asks for the same bytes without end, not reading its socket,
  // would grow this node's send buffer without bound).
  auto first = pull(frame->ticket, 0, 50000);
  auto second = pull(frame->ticket, 50000, 50000);
  auto again = pull(frame->ticket, 0, 50000);
  // Assert: both halves served as chunks answering their requests, the
  // repeat refused.
  ASSERT_TRUE(first && second && again) << "a request got no answer";
  ASSERT_EQ(first->type, wire::frame_type::chunk);
  ASSERT_EQ(second->type, wire::frame_type::chunk);
  EXPECT_EQ(chunk_request_id(*first), 1u);
  EXPECT_EQ(chunk_request_id(*second), 2u);
  EXPECT_EQ(chunk_data(*first).size(), 50000u);
  EXPECT_EQ(chunk_data(*second).size(), 50000u);
  auto refused = again->as<failed_answer>();
  ASSERT_TRUE(refused) << wire::name_of(again->type);
  EXPECT_EQ(refused->request, 3u);
  EXPECT_EQ(refused->reason, caf::make_error(ferry::errc::transfer_failed,
                                             refused->reason.context()));
  EXPECT_TRUE(
    mentions(refused->reason, "100000 of 100000 bytes were served already"));
}

TEST_F(hostile_fixture_small_pulls, ChunkRequestWhoseRangeWrapsAroundIsRefusedAndServesNothing) {
  // Arrange: an answer of 100,000 bytes whose frame stays with the peer.
  auto frame = ask_for_a_pulled_answer();
  ASSERT_TRUE(frame);
  // Act: a range from 50,000 whose end wraps around 2^64 to 1; then the
  // whole frame.
  auto wrapped = pull(frame->ticket, 50000, UINT64_MAX - 49999);
  auto whole = pull(frame->ticket, 0, 100000);
  // Assert: the wrapped range refused, and nothing of it counted as served.
  ASSERT_TRUE(wrapped && whole) << "a request got no answer";
  auto refused = wrapped->as<failed_answer>();
  ASSERT_TRUE(refused) << wire::name_of(wrapped->type);
  EXPECT_EQ(refused->reason, caf::make_error(ferry::errc::transfer_failed,
                                             refused->reason.context()));
  ASSERT_EQ(whole->type, wire::frame_type::chunk);
  auto bytes = chunk_data(*whole);
  EXPECT_EQ(bytes.size(), 100000u);
  EXPECT_EQ(std::count(bytes.begin(), bytes.end(), std::byte{7}), 100000);
}

TEST_F(hostile_fixture_small_pulls, TransferDoneForATransferNeverHeldReleasesNothing) {
  // Arrange: an answer of 100,000 bytes whose frame stays with the peer.
  auto frame = ask_for_a_pulled_answer();
  ASSERT_TRUE(frame);
  // Act: "rogue" releases transfers the peer never held for it, then pulls
  // the one it holds.
  conn_->send_control(transfer_done{frame->ticket + 1000});
  conn_->send_control(transfer_done{0});
  auto whole = pull(frame->ticket, 0, 100000);
  auto stats = peer_link_stats();
  // Assert: the peer still held the frame when the pull came after them
  // on the link, served it whole, and holds it still.
  EXPECT_NE(stats.find(" transfers=1 "), std::string::npos) << stats;
  ASSERT_TRUE(whole) << "no answer to the chunk request";
  ASSERT_EQ(whole->type, wire::frame_type::chunk);
  EXPECT_EQ(chunk_data(*whole).size(), 100000u);
}
