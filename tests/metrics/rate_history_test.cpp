// rate_history: rates per family and per link from counters sampled once
// per interval; a link that came back (counters from zero) never gives a
// negative rate; only the newest samples are kept.
#include "metrics/rate_history.hpp"

#include <gtest/gtest.h>

namespace {

using ferry::link_stats;
using ferry::detail::node_figures;
using ferry::detail::rate_history;

link_stats link(const std::string& peer, uint64_t sent, uint64_t received,
                uint64_t encoded, double encode_seconds) {
  link_stats x;
  x.peer = peer;
  x.messages_sent = sent;
  x.messages_received = received;
  x.bytes_inline_sent = sent * 100;
  x.bytes_inline_received = received * 100;
  x.sent_by_family["caf"] = sent;
  x.received_by_family["caf"] = received;
  x.encode_seconds["caf"].count = encoded;
  x.encode_seconds["caf"].sum = encode_seconds;
  return x;
}

node_figures figures(std::vector<link_stats> links) {
  node_figures x;
  x.links = std::move(links);
  return x;
}

TEST(rate_history, TheFirstSampleIsTheBaseAndTheNextGivesRates) {
  rate_history h;
  h.sample(figures({link("b", 10, 20, 10, 0.001)}), 1000);
  EXPECT_TRUE(h.samples().empty());
  h.sample(figures({link("b", 30, 60, 30, 0.003), link("c", 5, 0, 5, 0.001)}),
           3000);
  ASSERT_EQ(h.samples().size(), 1u);
  auto& s = h.samples().back();
  EXPECT_EQ(s.unix_ms, 3000);
  auto& caf = s.families.at("caf");
  // b: 20 more sent, c (new): 5, over 2 s.
  EXPECT_DOUBLE_EQ(caf.sent, 12.5);
  EXPECT_DOUBLE_EQ(caf.received, 20.0);
  // 25 elements encoded in 0.002 + 0.001 s.
  ASSERT_TRUE(caf.encode_seconds);
  EXPECT_DOUBLE_EQ(*caf.encode_seconds, 0.003 / 25);
  EXPECT_FALSE(caf.decode_seconds);
  EXPECT_DOUBLE_EQ(h.links().at("b").messages_sent, 10.0);
  EXPECT_DOUBLE_EQ(h.links().at("b").bytes_received, 2000.0);
  EXPECT_DOUBLE_EQ(h.links().at("c").messages_sent, 2.5);
}

TEST(rate_history, ALinkThatCameBackCountsFromZero) {
  rate_history h;
  h.sample(figures({link("b", 100, 100, 0, 0)}), 1000);
  h.sample(figures({link("b", 4, 2, 0, 0)}), 2000);
  auto& caf = h.samples().back().families.at("caf");
  EXPECT_DOUBLE_EQ(caf.sent, 4.0);
  EXPECT_DOUBLE_EQ(caf.received, 2.0);
  EXPECT_DOUBLE_EQ(h.links().at("b").messages_sent, 4.0);
}

TEST(rate_history, KeepsOnlyTheNewestSamples) {
  rate_history h{3};
  for (int i = 1; i <= 10; ++i)
    h.sample(figures({link("b", i, i, 0, 0)}), i * 1000);
  ASSERT_EQ(h.samples().size(), 3u);
  EXPECT_EQ(h.samples().front().unix_ms, 8000);
  EXPECT_EQ(h.samples().back().unix_ms, 10000);
}

TEST(rate_history, AClockThatWentBackStartsAgainFromThatSample) {
  rate_history h;
  h.sample(figures({link("b", 1, 1, 0, 0)}), 5000);
  h.sample(figures({link("b", 2, 2, 0, 0)}), 4000);
  EXPECT_TRUE(h.samples().empty());
  h.sample(figures({link("b", 4, 2, 0, 0)}), 5000);
  ASSERT_EQ(h.samples().size(), 1u);
  EXPECT_DOUBLE_EQ(h.samples().back().families.at("caf").sent, 2.0);
}

} // namespace
