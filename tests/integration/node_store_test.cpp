// Store objects (`shared_array`) in messages between a local node and a peer
// process: on the same host the receiver reads the very object; across hosts
// it gets a copy in its own store, made once for an object named twice, and
// the sender's handle is released when the receiver took it, refused the
// message before decoding it, or has no store at all (a clear error); store
// handles inside user types and parked references travel in every family
// that carries a struct.
//
// Each test runs a local node in the test process and starts peers
// (ferry_test_node) as child processes (node_fixture.hpp).
#include "node_fixture.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include "ferry/store/shared_array.hpp"

#include <caf/all.hpp>

#include "ferry/test/eventually.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using namespace ferry::test;

TEST_F(node_fixture, SharedArrayOnSameHostArrivesAsTheSameObject) {
  // Arrange
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  std::vector<double> values(1 << 16);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>(i);
  auto array = ferry::store::make_shared_array<double>(*local().store(),
                                                       values);
  ASSERT_TRUE(array) << ferry::render(array.error());
  // Act
  auto answer = ask<std::string>(*sut, *array);
  // Assert: the receiver read the very object we created (no copy).
  ASSERT_TRUE(answer) << ferry::render(answer.error());
  auto id = std::to_string(static_cast<uint64_t>(array->ref().id()));
  EXPECT_EQ(answer->substr(0, answer->find(' ')), id) << *answer;
  EXPECT_NE(answer->find(std::to_string(
              static_cast<double>(values.size() * (values.size() - 1) / 2))),
            std::string::npos)
    << *answer;
}

TEST_F(node_fixture, HandleInAMessageRefusedBeforeDecodingIsReleased) {
  // Arrange: a type only this node registers makes B refuse the message at
  // its first element, before it decodes (and redeems) the handle behind
  // it. A window of 4 messages makes B return credit after every message.
  cfg.add_message_type<std::vector<uint16_t>>("test.only_here");
  cfg.default_link.window_messages = 4;
  auto& b = start_peer("B");
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  auto array = ferry::store::make_shared_array<double>(
    *local().store(), std::vector<double>(1024, 1.0));
  ASSERT_TRUE(array) << ferry::render(array.error());
  // Act
  auto refused = ask<std::string>(*sut, std::vector<uint16_t>{1, 2, 3},
                                  *array);
  auto after = ask<std::string>(*sut, std::string{"abc"});
  // Assert: the refusal names the type; once B's credit for the refused
  // message is back, only our own handle holds the object.
  ASSERT_FALSE(refused);
  EXPECT_NE(ferry::render(refused.error()).find("test.only_here"),
            std::string::npos)
    << ferry::render(refused.error());
  ASSERT_TRUE(after) << ferry::render(after.error());
  ferry::test::eventually([&] { return array->ref().ref_count() == 1; });
  EXPECT_EQ(array->ref().ref_count(), 1u);
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->tickets_in_transit, 0u);
}

class handle_across_hosts : public node_fixture,
                            public ::testing::WithParamInterface<size_t> {};

TEST_P(handle_across_hosts, SharedArrayArrivesAsACopyInTheReceiversStore) {
  // Arrange: B has a store of its own (another host, as far as ferry knows).
  auto& b = start_peer("B", {}, true);
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  std::vector<double> values(GetParam());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>(i);
  auto array = ferry::store::make_shared_array<double>(*local().store(),
                                                       values);
  ASSERT_TRUE(array) << ferry::render(array.error());
  auto bytes = values.size() * sizeof(double);
  // Act
  auto answer = ask<std::string>(*sut, *array);
  // Assert: B read all elements from an object of its own store.
  ASSERT_TRUE(answer) << ferry::render(answer.error());
  EXPECT_NE(answer->find(std::to_string(
              static_cast<double>(values.size() * (values.size() - 1) / 2))),
            std::string::npos)
    << *answer;
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  if (bytes >= cfg.default_link.pull_threshold) {
    EXPECT_EQ(stats->bytes_pulled_by_peer, bytes); // pulled in chunks
  } else {
    EXPECT_EQ(stats->bytes_pulled_by_peer, 0u); // went with the message
    EXPECT_GE(stats->bytes_inline_sent, bytes);
  }
  // B took the copy before it answered: only our handle is left.
  EXPECT_EQ(array->ref().ref_count(), 1u);
  EXPECT_EQ(stats->tickets_in_transit, 0u);
}

// 512 KiB travels with the message, 12 MiB is above the 8 MiB pull threshold.
INSTANTIATE_TEST_SUITE_P(sizes, handle_across_hosts,
                         ::testing::Values(size_t{1} << 16,
                                           size_t{3} << 19));

TEST_F(node_fixture, SameObjectTwiceToAnotherHostIsCopiedOnce) {
  // Arrange
  auto& b = start_peer("B", {}, true);
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  std::vector<double> values(4096, 0.5);
  auto array = ferry::store::make_shared_array<double>(*local().store(),
                                                       values);
  ASSERT_TRUE(array) << ferry::render(array.error());
  ferry::test::array_pair pair{*array, *array};
  // Act: B answers whether both handles name one object and their sums.
  auto answer = ask<std::string>(*sut, pair);
  // Assert
  ASSERT_TRUE(answer) << ferry::render(answer.error());
  EXPECT_EQ(*answer, "same 2048 2048");
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_LT(stats->bytes_inline_sent, 2 * values.size() * sizeof(double));
  // Ours and the pair's two: nothing is left in transit.
  EXPECT_EQ(array->ref().ref_count(), 3u);
}

TEST_F(node_fixture, StoreHandleToANodeWithoutStoreFailsWithAClearError) {
  // Arrange
  auto& b = start_peer("B", {"--ferry.store.disabled"}, true);
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut);
  std::vector<double> values(16, 1.0);
  auto array = ferry::store::make_shared_array<double>(*local().store(),
                                                       values);
  ASSERT_TRUE(array);
  // Act
  auto answer = ask<std::string>(*sut, *array);
  // Assert: the request fails naming the cause; the sender's object is
  // released (only our handle is left) and B keeps running.
  ASSERT_FALSE(answer);
  auto text = ferry::render(answer.error());
  EXPECT_NE(text.find("has no store"), std::string::npos) << text;
  EXPECT_EQ(array->ref().ref_count(), 1u);
  auto echo = ask<std::string>(*sut, std::string{"abc"});
  ASSERT_TRUE(echo) << ferry::render(echo.error());
  EXPECT_EQ(*echo, "cba");
}

/// Families that carry a struct: each carries the store's handles.
class store_handles_in_family
  : public node_fixture,
    public ::testing::WithParamInterface<std::string> {};

TEST_P(store_handles_in_family, ArrayInAUserTypeAndAParkedReferenceArrive) {
  // Arrange: both nodes send with the family under test only; B has a store
  // of its own (another host's), so both objects are copied into it.
  auto& b = start_peer("B",
                       {"--ferry.link.serializers=[\"" + GetParam() + "\"]"},
                       true);
  cfg.default_link.serializers = {GetParam()};
  auto sut = local().remote_actor("127.0.0.1", b.port);
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  std::vector<double> values(1000, 2.0);
  auto array = ferry::store::make_shared_array<double>(*local().store(),
                                                       values);
  ASSERT_TRUE(array) << ferry::render(array.error());
  auto bytes = make_bytes(4096);
  auto object = local().store()->put(bytes);
  ASSERT_TRUE(object) << ferry::render(object.error());
  auto parked = ferry::store::park(*object);
  ASSERT_TRUE(parked) << ferry::render(parked.error());
  uint64_t byte_sum = 0;
  for (auto x : bytes)
    byte_sum += static_cast<uint8_t>(x);
  // Act
  auto labelled = ask<std::string>(*sut, labelled_array{"twos", *array});
  auto from_parked = ask<std::string>(*sut, *parked);
  // Assert
  ASSERT_TRUE(labelled) << ferry::render(labelled.error());
  EXPECT_EQ(*labelled, "twos 2000");
  ASSERT_TRUE(from_parked) << ferry::render(from_parked.error());
  EXPECT_EQ(*from_parked, "4096 " + std::to_string(byte_sum));
  auto stats = local().stats("B");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->sent_by_family[GetParam()], 2u);
}

INSTANTIATE_TEST_SUITE_P(families, store_handles_in_family,
                         ::testing::Values("cereal.binary", "cereal.portable",
                                           "cereal.json", "msgpack", "caf"),
                         family_test_name);
