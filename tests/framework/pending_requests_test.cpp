// The responses a link may deliver (link/pending_requests): a response
// takes the record of its request, once; records of an asker go with it;
// a full table drops its oldest record for the new one; a closed table
// hands back what it held and takes nothing more.
#include "link/pending_requests.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <vector>

using ferry::detail::pending_requests;

namespace {

/// An actor system and actors to ask with.
class pending_requests_test : public testing::Test {
protected:
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};

  /// Returns a new actor that lives until the test ends.
  caf::strong_actor_ptr asker() {
    auto result = sys.spawn([]() -> caf::behavior {
      return {[](int32_t) {}};
    });
    actors.push_back(result);
    return caf::actor_cast<caf::strong_actor_ptr>(result);
  }

  ~pending_requests_test() override {
    for (auto& x : actors)
      caf::anon_send_exit(x, caf::exit_reason::user_shutdown);
  }

  std::vector<caf::actor> actors;
};

caf::message_id request(uint64_t n) {
  return caf::make_message_id(n);
}

} // namespace

TEST_F(pending_requests_test, ResponseTakesItsRequestsRecordOnce) {
  // Arrange
  pending_requests sut{8};
  auto a = asker();
  ASSERT_TRUE(sut.add(a, request(7)).recorded);
  // Act
  auto first = sut.answered(a->id(), request(7).response_id());
  auto second = sut.answered(a->id(), request(7).response_id());
  // Assert
  EXPECT_TRUE(first);
  EXPECT_FALSE(second);
  EXPECT_EQ(sut.size(), 0u);
}

TEST_F(pending_requests_test, ResponseToAnotherAskerOrIdIsNotRecorded) {
  // Arrange
  pending_requests sut{8};
  auto a = asker();
  auto b = asker();
  ASSERT_TRUE(sut.add(a, request(7)).recorded);
  // Act and assert: another asker's id, another request number.
  EXPECT_FALSE(sut.answered(b->id(), request(7).response_id()));
  EXPECT_FALSE(sut.answered(a->id(), request(8).response_id()));
  EXPECT_TRUE(sut.answered(a->id(), request(7).response_id()));
}

TEST_F(pending_requests_test, RequestsOfAnAskerThatEndedAreForgotten) {
  // Arrange
  pending_requests sut{8};
  auto a = asker();
  auto b = asker();
  ASSERT_TRUE(sut.add(a, request(1)).recorded);
  ASSERT_TRUE(sut.add(a, request(2)).recorded);
  ASSERT_TRUE(sut.add(b, request(1)).recorded);
  // Act
  sut.forget(a->id());
  // Assert
  EXPECT_EQ(sut.size(), 1u);
  EXPECT_FALSE(sut.answered(a->id(), request(1).response_id()));
  EXPECT_FALSE(sut.answered(a->id(), request(2).response_id()));
  EXPECT_TRUE(sut.answered(b->id(), request(1).response_id()));
}

TEST_F(pending_requests_test, FullTableDropsItsOldestRecordForTheNewOne) {
  // Arrange: three records in a table of three, the second answered.
  pending_requests sut{3};
  auto a = asker();
  ASSERT_FALSE(sut.add(a, request(1)).evicted);
  ASSERT_FALSE(sut.add(a, request(2)).evicted);
  ASSERT_FALSE(sut.add(a, request(3)).evicted);
  ASSERT_TRUE(sut.answered(a->id(), request(2).response_id()));
  ASSERT_FALSE(sut.add(a, request(4)).evicted);
  // Act: one more than fits.
  auto added = sut.add(a, request(5));
  // Assert: the oldest record (1) went, and its requester is named.
  ASSERT_TRUE(added.recorded);
  ASSERT_TRUE(added.evicted);
  EXPECT_EQ(added.evicted->mid, request(1));
  EXPECT_EQ(caf::actor_cast<caf::strong_actor_ptr>(added.evicted->requester),
            a);
  EXPECT_EQ(sut.size(), 3u);
  EXPECT_FALSE(sut.answered(a->id(), request(1).response_id()));
  EXPECT_TRUE(sut.answered(a->id(), request(3).response_id()));
}

TEST_F(pending_requests_test, ManyAnswersOutOfOrderKeepTheOldestFirst) {
  // Arrange: record 0 waits while thousands come and go after it, answered
  // newest first, so its order is rebuilt many times.
  pending_requests sut{4};
  auto a = asker();
  ASSERT_TRUE(sut.add(a, request(1)).recorded);
  for (uint64_t i = 0; i < 5000; i += 2) {
    ASSERT_FALSE(sut.add(a, request(100 + i)).evicted);
    ASSERT_FALSE(sut.add(a, request(101 + i)).evicted);
    ASSERT_TRUE(sut.answered(a->id(), request(101 + i).response_id()));
    ASSERT_TRUE(sut.answered(a->id(), request(100 + i).response_id()));
  }
  ASSERT_TRUE(sut.add(a, request(2)).recorded);
  ASSERT_TRUE(sut.add(a, request(3)).recorded);
  ASSERT_TRUE(sut.add(a, request(4)).recorded);
  // Act
  auto added = sut.add(a, request(5));
  // Assert
  ASSERT_TRUE(added.evicted);
  EXPECT_EQ(added.evicted->mid, request(1));
  EXPECT_EQ(sut.size(), 4u);
}

TEST_F(pending_requests_test, ClosedTableHandsBackItsRecordsAndTakesNoMore) {
  // Arrange
  pending_requests sut{8};
  auto a = asker();
  ASSERT_TRUE(sut.add(a, request(1)).recorded);
  ASSERT_TRUE(sut.add(a, request(2)).recorded);
  // Act
  auto pending = sut.close();
  auto after = sut.add(a, request(3));
  // Assert
  EXPECT_EQ(pending.size(), 2u);
  EXPECT_FALSE(after.recorded);
  EXPECT_FALSE(after.evicted);
  EXPECT_EQ(sut.size(), 0u);
}

TEST_F(pending_requests_test, OneResponsePerRequestPassesTheHeldLimits) {
  // Arrange
  pending_requests sut{8};
  auto a = asker();
  ASSERT_TRUE(sut.add(a, request(1)).recorded);
  auto response = request(1).response_id();
  // Act
  auto first = sut.claim_held_answer(a->id(), response);
  auto second = sut.claim_held_answer(a->id(), response);
  auto never_asked = sut.claim_held_answer(a->id(), request(2).response_id());
  // Assert
  EXPECT_TRUE(first);
  EXPECT_FALSE(second);
  EXPECT_FALSE(never_asked);
}
