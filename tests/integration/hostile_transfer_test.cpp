// Large frames that stay with a hostile sender until pulled, and the
// receiver pulling them: chunk replies naming another request's landing or
// none, frame sizes that wrap around, a claimed frame whose chunks never come,
// thousands of messages queued behind a pull that fails, a store ticket from
// another host; and the receiver serving its own pulled frames to a peer that
// never says it is done or asks for the same bytes again. Each ends in a typed
// error or a release, memory follows the chunks asked for, not the sizes
// claimed, and the link goes on.
#include "hostile_peer.hpp"

#include "ferry/errc.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace std::chrono_literals;
using namespace ferry::detail;
using ferry::test::hostile_fixture;
using ferry::test::mentions;
using ferry::test::named_landing;

namespace ferry::test {

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

} // namespace ferry::test

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
  // Act: the reply names no registered landing, so it is read aside; it
  // must not be taken by its message id alone, which is all a node forging
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
  // to pull, then refused). Taken one after the other by recursion (some
  // 700 bytes of stack per message in a release build), 15,000 would
  // overflow the worker's 8 MiB stack and end the node.
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
  // it go (not only once the link goes down).
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
  // would grow this node's send buffer without bound).
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

TEST_F(hostile_fixture, RelayRequestsForKeysNeverGivenOrWithoutTokenAreRefused) {
  // Arrange: a linked peer that was never sent a store object.
  auto target = handshake();
  ASSERT_NE(target, 0u);
  auto relay = [&](uint64_t token) {
    caf::error err;
    bool got_bytes = false;
    (*self_)
      ->request(gateway_, 10s, relay_request{0x5eed, 0, 4096, 0, token})
      .receive([&](chunk_reply&) { got_bytes = true; },
               [&](caf::error& x) { err = std::move(x); });
    EXPECT_FALSE(got_bytes);
    return err;
  };
  // Act: a guessed relay key, then the same without the link's token.
  auto guessed = relay(token_);
  auto untokened = relay(token_ + 1);
  auto link = peer_link_stats();
  // Assert: both refused with the reason, and the link goes on.
  ASSERT_TRUE(guessed);
  EXPECT_EQ(guessed, caf::make_error(ferry::errc::transfer_failed,
                                     guessed.context()));
  EXPECT_TRUE(mentions(guessed, "pull it from its owner"));
  ASSERT_TRUE(untokened);
  EXPECT_EQ(untokened,
            caf::make_error(ferry::errc::link_down, untokened.context()));
  EXPECT_NE(link, "");
}
