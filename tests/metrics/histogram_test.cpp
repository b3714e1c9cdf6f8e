// The counters behind the metrics: histogram buckets and refusal reasons.
#include "link/link_counters.hpp"
#include "metrics/histogram.hpp"

#include "ferry/errc.hpp"

#include <caf/sec.hpp>

#include <gtest/gtest.h>

namespace {

using ferry::detail::histogram;

TEST(histogram, CountsAValueOnABoundInThatBucket) {
  histogram sut{histogram::layout::count};
  sut.observe(1);
  sut.observe(2);
  sut.observe(3);
  auto x = sut.snapshot();
  ASSERT_EQ(x.counts.size(), x.bounds.size() + 1);
  EXPECT_EQ(x.bounds[0], 1.0);
  EXPECT_EQ(x.counts[0], 1u); // 1 <= 1
  EXPECT_EQ(x.counts[1], 1u); // 1 < 2 <= 2
  EXPECT_EQ(x.counts[2], 1u); // 2 < 3 <= 4
  EXPECT_EQ(x.count, 3u);
  EXPECT_EQ(x.sum, 6.0);
}

TEST(histogram, CountsAValueAboveEveryBoundInTheLastBucket) {
  histogram sut{histogram::layout::count};
  sut.observe(100000);
  auto x = sut.snapshot();
  EXPECT_EQ(x.counts.back(), 1u);
  EXPECT_EQ(x.count, 1u);
}

TEST(histogram, ShowsNanosecondsInSeconds) {
  histogram sut{histogram::layout::nanoseconds};
  EXPECT_TRUE(sut.empty());
  sut.observe(1'000);     // 1 us: the first bucket
  sut.observe(1'001);     // just above: the second
  sut.observe(2'000'000); // 2 ms
  auto x = sut.snapshot();
  EXPECT_FALSE(sut.empty());
  EXPECT_DOUBLE_EQ(x.bounds.front(), 1e-6);
  EXPECT_DOUBLE_EQ(x.bounds.back(), 10.0);
  EXPECT_EQ(x.counts[0], 1u);
  EXPECT_EQ(x.counts[1], 1u);
  EXPECT_DOUBLE_EQ(x.sum, 0.002002001);
  EXPECT_EQ(x.count, 3u);
}

TEST(link_counters, CountsRefusalsByTheNameOfTheirReason) {
  ferry::detail::link_counters sut;
  sut.count_refusal(caf::make_error(ferry::errc::receiver_full, "full"));
  sut.count_refusal(caf::make_error(ferry::errc::receiver_full, "full"));
  sut.count_refusal(caf::make_error(ferry::errc::no_such_actor, "gone"));
  sut.count_refusal(caf::make_error(caf::sec::unexpected_message));
  auto reasons = sut.refusal_reasons();
  EXPECT_EQ(sut.refusals.load(), 4u);
  EXPECT_EQ((std::map<std::string, uint64_t>{{"no_such_actor", 1},
                                             {"other", 1},
                                             {"receiver_full", 2}}),
            reasons);
}

} // namespace
