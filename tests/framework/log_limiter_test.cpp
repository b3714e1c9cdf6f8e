// The log limiter on a manual clock: one line per interval, and the next
// line that passes counts those left out.
#include "log_limiter.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

using namespace std::chrono_literals;
using ferry::detail::log_limiter;
using ferry::detail::manual_clock;

TEST(log_limiter, FirstLinePassesAndTheRestOfTheIntervalIsCounted) {
  // Arrange
  manual_clock time;
  log_limiter sut{1s, time};
  // Act
  auto first = sut.pass("refused");
  time.advance(999ms);
  auto second = sut.pass("refused");
  auto third = sut.pass("refused");
  // Assert
  EXPECT_EQ(first, std::optional<std::string>{"refused"});
  EXPECT_EQ(second, std::nullopt);
  EXPECT_EQ(third, std::nullopt);
}

TEST(log_limiter, LineAfterTheIntervalSaysHowManyWereLeftOut) {
  // Arrange: one line through, two left out.
  manual_clock time;
  log_limiter sut{1s, time};
  ASSERT_TRUE(sut.pass("refused"));
  ASSERT_FALSE(sut.pass("refused"));
  ASSERT_FALSE(sut.pass("refused"));
  // Act
  time.advance(1s);
  auto after = sut.pass("refused");
  time.advance(1s);
  auto quiet = sut.pass("refused");
  // Assert: the count goes with the next line only.
  EXPECT_EQ(after, std::optional<std::string>{
                     "refused (and 2 more like it since the last line)"});
  EXPECT_EQ(quiet, std::optional<std::string>{"refused"});
}

TEST(log_limiter, IntervalRunsFromTheLastLineThatPassed) {
  // Arrange
  manual_clock time;
  log_limiter sut{1s, time};
  ASSERT_TRUE(sut.pass("a"));
  time.advance(600ms);
  ASSERT_FALSE(sut.pass("a"));
  // Act: 1.2 s after the first line, 0.6 s after the one left out.
  time.advance(600ms);
  auto passed = sut.pass("a");
  time.advance(500ms);
  auto too_soon = sut.pass("a");
  // Assert
  EXPECT_TRUE(passed);
  EXPECT_FALSE(too_soon);
}
