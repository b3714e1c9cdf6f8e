// Credit-based flow control and batching on a link between a local node and
// a peer process: a fast sender stays within the window of messages and of
// bytes (store frames count with their size); a sender without credit gets
// send_timeout while the link stays up; a message larger than the window is
// not starved by smaller ones; responses to this node's own requests pass
// its held limit; the receiver returns credit in batches, and the rest once
// idle; the sender forgets store tickets the receiver took; bursts of small
// messages travel in batches, in order, and one by one without batching.
//
// Each test runs a local node in the test process and starts peers
// (ferry_test_node) as child processes (node_fixture.hpp).
#include "node_fixture.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/test/eventually.hpp"
#include "ferry/test/credit_waits.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

/// Sends `count` copies of `payload` to `gate` (the peer's "gate" actor,
/// which holds what it gets unprocessed, so no credit comes back) from a
/// thread of its own, so a sender waits whatever the speed of either side;
/// opens the gate once one did (or after 10 s) and returns the link's stats
/// seen then.
ferry::link_stats send_to_closed_gate(ferry::node& from,
                                      const std::string& name, peer& owner,
                                      const caf::actor& gate,
                                      const std::vector<std::byte>& payload,
                                      int count) {
  std::thread sender{[&] {
    caf::scoped_actor self{from.system()};
    for (int i = 0; i < count; ++i)
      self->send(gate, payload);
  }};
  auto at_wait = await_credit_waits(from, name, 1);
  owner.process->write_line("open-gate");
  sender.join();
  return at_wait;
}

} // namespace

TEST_F(node_fixture, FastSenderStaysWithinTheCreditWindow) {
  // Arrange: the window holds 16 messages, far fewer than the 300 sent,
  // and 4 MiB, room for 128 of them. B's "gate" holds them unprocessed
  // until the sender waited, so it waits however fast either side runs.
  auto& b = start_peer("B");
  cfg.default_link.window_messages = 16;
  cfg.default_link.window_bytes = uint64_t{4} << 20;
  auto sut = local().remote_actor("127.0.0.1", b.port, "gate");
  ASSERT_TRUE(sut);
  auto chunk = make_bytes(32 << 10);
  // Act
  auto at_wait = send_to_closed_gate(local(), "B", b, *sut, chunk, 300);
  auto count = ask<uint64_t>(*sut, std::string{"count"});
  // Assert: the message count held the sender back, not the bytes.
  EXPECT_GT(at_wait.credit_waits, 0u);
  ASSERT_TRUE(count) << ferry::render(count.error());
  EXPECT_EQ(*count, 300u);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_LE(stats->peak_in_flight_bytes, 16u * ((32 << 10) + 1024));
  EXPECT_EQ(stats->send_errors, 0u);
}

TEST_F(node_fixture, ResponsesToOwnRequestsAreTakenBeyondTheHeldLimit) {
  // Arrange: this node holds at most 2 of B's messages unprocessed; a
  // requester makes 20 requests before it reads any response.
  auto& b = start_peer("B");
  cfg.default_link.max_held_messages = 2;
  auto echo = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(echo) << ferry::render(echo.error());
  caf::scoped_actor self{local().system()};
  std::vector<caf::response_handle<caf::blocking_actor,
                                   caf::message, true>> handles;
  for (int32_t i = 0; i < 20; ++i)
    handles.push_back(self->request(*echo, 30s, i));
  // Act: wait until all 20 responses are held in the requester's mailbox,
  // then read them.
  uint64_t held = 0;
  ferry::test::eventually([&] {
    auto stats = local().stats("B");
    held = stats ? stats->held_messages : 0;
    return held >= 20;
  });
  std::vector<int32_t> answers;
  for (auto& handle : handles)
    handle.receive([&](int32_t x) { answers.push_back(x); },
                   [&](caf::error& err) {
                     ADD_FAILURE() << ferry::render(err);
                   });
  // Assert: the requester asked for them, so none was refused.
  EXPECT_EQ(held, 20u);
  ASSERT_EQ(answers.size(), 20u);
  for (int32_t i = 0; i < 20; ++i)
    EXPECT_EQ(answers[i], i + 1);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->refusals, 0u);
  EXPECT_EQ(stats->held_messages, 0u);
}

TEST_F(node_fixture, StoreFramesCountAgainstTheCreditWindow) {
  // Arrange: same host, so 1 MiB messages travel as store objects. The
  // window holds 4 MiB but many more messages, so only the bytes can hold
  // the sender back. (Counted as its ticket's few bytes, a store frame
  // would never make the sender wait, and the decoded copies would pile up
  // in a slow actor's mailbox.) B's "gate" holds them unprocessed until the
  // sender waited, so it returns no credit however fast either side runs.
  store_bytes_ = uint64_t{32} << 20;
  auto& b = start_peer("B");
  cfg.default_link.window_messages = 4096;
  cfg.default_link.window_bytes = uint64_t{4} << 20;
  auto sut = local().remote_actor("127.0.0.1", b.port, "gate");
  ASSERT_TRUE(sut);
  auto chunk = make_bytes(1 << 20);
  // Act
  auto at_wait = send_to_closed_gate(local(), "B", b, *sut, chunk, 100);
  auto count = ask<uint64_t>(*sut, std::string{"count"});
  // Assert: at most three messages of a little over 1 MiB fit in 4 MiB.
  ASSERT_TRUE(count) << ferry::render(count.error());
  EXPECT_EQ(*count, 100u);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_TRUE(stats->same_host);
  EXPECT_EQ(stats->bytes_spilled_sent, uint64_t{100} << 20);
  EXPECT_EQ(stats->send_errors, 0u);
  EXPECT_GT(at_wait.credit_waits, 0u);
  EXPECT_GE(stats->peak_in_flight_bytes, uint64_t{1} << 20);
  EXPECT_LE(stats->peak_in_flight_bytes, uint64_t{4} << 20);
}

TEST_F(node_fixture, SenderWithoutCreditGetsSendTimeoutWhileTheLinkStaysUp) {
  // Arrange: B is stopped (SIGSTOP), so the two messages of the window stay
  // unacknowledged; its connection stays open. The local node's time is a
  // manual clock, moved past the send timeout once the sender waits.
  auto& b = start_peer("B");
  auto time = std::make_shared<ferry::manual_clock>();
  cfg.clock = time;
  cfg.default_link.window_messages = 2;
  cfg.default_link.batch_messages = 1;
  cfg.default_link.send_timeout = std::chrono::milliseconds{300};
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  // Stopped for sure: a B still running could return the credit of "one"
  // and let "three" go (it then waits out the request's timeout).
  ASSERT_TRUE(b.process->stop());
  auto stopped = local().stats("B");
  ASSERT_TRUE(stopped) << ferry::render(stopped.error());
  caf::scoped_actor self{local().system()};
  self->send(*sut, std::string{"one"});
  self->send(*sut, std::string{"two"});
  // Act: 299 ms pass while the sender waits, then one more.
  std::thread clock_mover{[&] {
    await_credit_waits(local(), "B", 1);
    time->advance(299ms);
    std::this_thread::sleep_for(20ms);
    time->advance(1ms);
  }};
  caf::error err;
  auto waited = std::chrono::steady_clock::now();
  self->request(*sut, 10s, std::string{"three"})
    .receive([](const std::string&) {}, [&](caf::error& x) { err = x; });
  auto real_wait = std::chrono::steady_clock::now() - waited;
  clock_mover.join();
  b.process->kill(SIGCONT);
  // Assert: send_timeout (not link_down) once 300 ms passed, not at 299,
  // naming the peer and the setting; once B runs again and its credit is
  // back the link carries messages as before.
  EXPECT_EQ(err, caf::make_error(ferry::errc::send_timeout, err.context()))
    << ferry::render(err);
  EXPECT_GE(real_wait, 20ms) << "the send timed out before its 300 ms passed";
  auto text = ferry::render(err);
  EXPECT_NE(text.find("no credit from node B within 300 ms"),
            std::string::npos)
    << text;
  EXPECT_NE(text.find("send-timeout"), std::string::npos) << text;
  ASSERT_TRUE(ferry::test::eventually([&] {
    auto now = local().stats("B");
    return now && now->credits_received > stopped->credits_received;
  }));
  auto after = ask<std::string>(*sut, std::string{"four"});
  ASSERT_TRUE(after) << ferry::render(after.error());
  EXPECT_EQ(*after, "ruof");
}

TEST_F(node_fixture, MessageAboveTheWindowIsNotStarvedBySmallerOnes) {
  // Arrange: a 4 MiB window of 16 messages to B's "gate", which holds what
  // it gets unprocessed until opened. One thread streams 600 messages of
  // 32 KiB; a 6 MiB message, more than the window, needs the link to drain
  // first. The gate opens once both wait for credit, the stream first, so
  // the order they queue in does not depend on how fast any thread runs.
  auto& b = start_peer("B");
  cfg.default_link.window_messages = 16;
  cfg.default_link.window_bytes = uint64_t{4} << 20;
  auto sut = local().remote_actor("127.0.0.1", b.port, "gate");
  ASSERT_TRUE(sut);
  auto small = make_bytes(32 << 10);
  auto large = make_bytes(6 << 20);
  std::thread stream{[&] {
    caf::scoped_actor self{local().system()};
    for (int i = 0; i < 600; ++i)
      self->send(*sut, small);
  }};
  auto stream_waits = await_credit_waits(local(), "B", 1).credit_waits;
  // Act: senders take credit in the order they came, so the large message
  // goes once the 16 messages in flight and the stream's waiting one are
  // through, not after the whole stream: the stream's next message queues
  // behind it.
  std::thread large_sender{[&] {
    caf::scoped_actor self{local().system()};
    self->send(*sut, large);
  }};
  auto both_waits = await_credit_waits(local(), "B", 2).credit_waits;
  b.process->write_line("open-gate");
  large_sender.join();
  stream.join();
  auto count = ask<uint64_t>(*sut, std::string{"count"});
  auto large_at = ask<uint64_t>(*sut, std::string{"largest-at"});
  // Assert: the gate took 16 messages and the stream's waiting one before
  // the large message, in the order the link delivered them. Starved, the
  // large message would have come after all 600.
  EXPECT_EQ(stream_waits, 1u);
  EXPECT_EQ(both_waits, 2u);
  ASSERT_TRUE(large_at) << ferry::render(large_at.error());
  EXPECT_EQ(*large_at, 17u);
  ASSERT_TRUE(count) << ferry::render(count.error());
  EXPECT_EQ(*count, 601u);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->send_errors, 0u);
}

TEST_F(node_fixture, BurstOfSmallMessagesTravelsInBatchesInOrder) {
  // Arrange: with a 10 s gap every message after the first is part of the
  // burst; batches of at most 16.
  auto& b = start_peer("B");
  cfg.default_link.batch_gap = std::chrono::seconds{10};
  cfg.default_link.batch_messages = 16;
  auto sut = local().remote_actor("127.0.0.1", b.port, "sequence");
  ASSERT_TRUE(sut);
  caf::scoped_actor self{local().system()};
  // Act: the request joins the last batch (the flusher sends it).
  for (int64_t i = 0; i < 1000; ++i)
    self->send(*sut, i);
  auto answer = ask<std::string>(*sut, std::string{"report"});
  // Assert
  ASSERT_TRUE(answer) << ferry::render(answer.error());
  EXPECT_EQ(*answer, "1000 1000");
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  // How full each batch gets depends on when the flusher runs; each holds
  // 2 to 16 messages and they add up to at most all of them.
  EXPECT_GE(stats->batches_sent, 1u);
  EXPECT_LE(stats->messages_batched, 1001u);
  EXPECT_GE(stats->messages_batched, 2 * stats->batches_sent);
  EXPECT_LE(stats->messages_batched, 16 * stats->batches_sent);
}

TEST_F(node_fixture, BatchIsHeldUntilItsGapPassesOnTheNodesClock) {
  // Arrange: batches of at most 16 messages posted within 1 ms of each
  // other, on a manual clock that stands still while 20 are sent.
  auto& b = start_peer("B");
  auto time = std::make_shared<ferry::manual_clock>();
  cfg.clock = time;
  cfg.default_link.batch_gap = std::chrono::milliseconds{1};
  cfg.default_link.batch_messages = 16;
  auto sut = local().remote_actor("127.0.0.1", b.port, "sequence");
  ASSERT_TRUE(sut);
  caf::scoped_actor self{local().system()};
  auto batched = [&] {
    auto now = local().stats("B");
    return now ? now->messages_batched : uint64_t{0};
  };
  // Act: the first message goes alone (nothing came before it), the next
  // 16 fill a batch, and 3 stay held while the clock stands still.
  for (int64_t i = 0; i < 20; ++i)
    self->send(*sut, i);
  auto full = eventually([&] { return batched() == 16; });
  std::this_thread::sleep_for(20ms);
  auto held = batched();
  time->advance(std::chrono::milliseconds{1});
  auto sent = eventually([&] { return batched() == 19; });
  auto answer = ask<std::string>(*sut, std::string{"report"});
  // Assert
  EXPECT_TRUE(full);
  EXPECT_EQ(held, 16u);
  EXPECT_TRUE(sent);
  ASSERT_TRUE(answer) << ferry::render(answer.error());
  EXPECT_EQ(*answer, "20 20");
}

TEST_F(node_fixture, WithoutBatchingEveryMessageTravelsAlone) {
  // Arrange
  auto& b = start_peer("B");
  cfg.default_link.batch_gap = std::chrono::seconds{10};
  cfg.default_link.batch_messages = 1;
  auto sut = local().remote_actor("127.0.0.1", b.port, "sequence");
  ASSERT_TRUE(sut);
  caf::scoped_actor self{local().system()};
  // Act
  for (int64_t i = 0; i < 200; ++i)
    self->send(*sut, i);
  auto answer = ask<std::string>(*sut, std::string{"report"});
  // Assert
  ASSERT_TRUE(answer) << ferry::render(answer.error());
  EXPECT_EQ(*answer, "200 200");
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->batches_sent, 0u);
}

TEST_F(node_fixture, CreditBelowOneBatchIsReturnedOnceTheReceiverIsIdle) {
  // Arrange: a 1 MiB window; the receiver returns credit in batches of a
  // quarter window, so 200 KiB alone is below one batch.
  auto& b = start_peer("B", {}, true);
  cfg.default_link.window_bytes = uint64_t{1} << 20;
  cfg.default_link.send_timeout = std::chrono::milliseconds{10000};
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  auto first = make_bytes(200 << 10);
  auto second = make_bytes(900 << 10); // fits only once the first is returned
  // Act
  auto hash1 = ask<uint64_t>(*sut, first);
  auto hash2 = ask<uint64_t>(*sut, second);
  // Assert
  ASSERT_TRUE(hash1) << ferry::render(hash1.error());
  ASSERT_TRUE(hash2) << ferry::render(hash2.error());
  EXPECT_EQ(*hash2, fnv1a(second));
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->send_errors, 0u);
}

TEST_F(node_fixture, ReceiverReturnsCreditInBatchesNotPerMessage) {
  // Arrange: 400 messages per window, so credit returns per 100 messages;
  // 300 one-way messages never fill the window.
  auto& b = start_peer("B");
  cfg.default_link.window_messages = 400;
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  caf::scoped_actor self{local().system()};
  // Act
  for (int32_t i = 0; i < 300; ++i)
    self->send(*sut, i);
  auto text = ask<std::string>(*sut, std::string{"done"}); // after the 300
  // Assert
  ASSERT_TRUE(text) << ferry::render(text.error());
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->credit_waits, 0u);
  EXPECT_GE(stats->credits_received, 2u);
  EXPECT_LE(stats->credits_received, 4u);
}

TEST_F(node_fixture, SenderForgetsStoreTicketsTheReceiverTook) {
  // Arrange: 256 KiB frames spill into the store (the wire message carries
  // a ticket of a few bytes); a 16-message window returns credit, and the
  // count of messages taken, every 4 messages.
  auto& b = start_peer("B");
  cfg.default_link.window_messages = 16;
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  auto payload = make_bytes(256 << 10);
  caf::scoped_actor self{local().system()};
  // Act
  for (int i = 0; i < 100; ++i)
    self->send(*sut, payload);
  auto hash = ask<uint64_t>(*sut, payload);
  // Assert
  ASSERT_TRUE(hash) << ferry::render(hash.error());
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_GE(stats->bytes_spilled_sent, uint64_t{101} * (256 << 10));
  EXPECT_LT(stats->tickets_in_transit, 20u)
    << "credits received: " << stats->credits_received
    << ", credit waits: " << stats->credit_waits;
}
