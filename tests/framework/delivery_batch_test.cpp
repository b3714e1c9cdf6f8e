// Messages of one wire batch entering their mailboxes together
// (link/delivery_batch): inside a scope a posted element waits for the end
// of the thread's outermost scope (or a flush) and then enters its mailbox
// in posting order; outside any scope it enters at once.
#include "link/delivery_batch.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/make_message.hpp>
#include <caf/scoped_actor.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

using namespace ferry::detail;

namespace {

class delivery_batch_test : public testing::Test {
protected:
  delivery_batch_test() : sys(cfg), self(sys) {
    // nop
  }

  /// Posts `x` to the test's own mailbox.
  void post(int32_t x) {
    delivery_batch::post(caf::actor_cast<caf::strong_actor_ptr>(self),
                         caf::make_mailbox_element(nullptr,
                                                   caf::make_message_id(), {},
                                                   caf::make_message(x)),
                         nullptr);
  }

  /// Takes every message waiting in the test's mailbox, in mailbox order.
  std::vector<int32_t> take_all() {
    std::vector<int32_t> result;
    for (bool done = false; !done;)
      self->receive([&](int32_t x) { result.push_back(x); },
                    caf::after(std::chrono::seconds{0}) >> [&] { done = true; });
    return result;
  }

  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::scoped_actor self;
};

} // namespace

TEST_F(delivery_batch_test, PostOutsideAScopeEntersTheMailboxAtOnce) {
  // Act
  post(1);
  // Assert
  EXPECT_EQ(take_all(), std::vector<int32_t>{1});
}

TEST_F(delivery_batch_test, PostsInsideAScopeEnterTogetherInOrderAtItsEnd) {
  {
    // Arrange
    delivery_batch sut;
    // Act
    for (int32_t i = 0; i < 5; ++i)
      post(i);
    // Assert
    EXPECT_TRUE(take_all().empty());
  }
  EXPECT_EQ(take_all(), (std::vector<int32_t>{0, 1, 2, 3, 4}));
}

TEST_F(delivery_batch_test, InnerScopeJoinsTheOutermostOne) {
  {
    // Arrange
    delivery_batch outer;
    post(1);
    {
      delivery_batch inner;
      post(2);
    }
    // Assert: the inner scope's end delivered nothing.
    EXPECT_TRUE(take_all().empty());
    post(3);
  }
  EXPECT_EQ(take_all(), (std::vector<int32_t>{1, 2, 3}));
}

TEST_F(delivery_batch_test, FlushDeliversWhatCameBeforeAndTheRestWaits) {
  {
    // Arrange
    delivery_batch sut;
    post(1);
    post(2);
    // Act
    delivery_batch::flush();
    post(3);
    // Assert
    EXPECT_EQ(take_all(), (std::vector<int32_t>{1, 2}));
  }
  EXPECT_EQ(take_all(), std::vector<int32_t>{3});
}

TEST_F(delivery_batch_test, ScopeOfAnotherThreadDoesNotHoldThisThreadsPosts) {
  // Arrange: a scope open on this thread.
  delivery_batch sut;
  // Act: another thread posts outside any scope of its own.
  std::thread other{[this] { post(7); }};
  other.join();
  // Assert
  EXPECT_EQ(take_all(), std::vector<int32_t>{7});
}

TEST_F(delivery_batch_test, EmptyScopeDeliversNothing) {
  {
    delivery_batch sut;
  }
  EXPECT_TRUE(take_all().empty());
}

TEST_F(delivery_batch_test, OpenSaysWhetherTheThreadIsInsideAScope) {
  // Arrange
  EXPECT_FALSE(delivery_batch::open());
  {
    delivery_batch outer;
    // Assert: sends from here on must not wait for credit.
    EXPECT_TRUE(delivery_batch::open());
    {
      delivery_batch inner;
      EXPECT_TRUE(delivery_batch::open());
    }
    EXPECT_TRUE(delivery_batch::open());
  }
  EXPECT_FALSE(delivery_batch::open());
}
