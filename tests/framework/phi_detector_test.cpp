// The phi-accrual failure detector, driven by a clock the test moves.
#include "cluster/phi_detector.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

using namespace std::chrono_literals;
using ferry::detail::phi_detector;

namespace {

phi_detector::settings akka_defaults() {
  return {}; // 1 s estimate, 3 s acceptable pause, 100 ms deviation floor
}

struct manual_time {
  phi_detector::clock::time_point now{};
  void advance(phi_detector::duration d) {
    now += d;
  }
};

// Sends `n` heartbeats `gap` apart; leaves the time at the last one.
void beat(phi_detector& sut, manual_time& t, int n,
          phi_detector::duration gap) {
  for (int i = 0; i < n; ++i) {
    if (i > 0)
      t.advance(gap);
    sut.heartbeat(t.now);
  }
}

} // namespace

TEST(phi_detector, KnowsNothingBeforeTheFirstHeartbeat) {
  phi_detector sut{akka_defaults()};
  manual_time t;
  t.advance(1h);
  EXPECT_EQ(sut.phi(t.now), 0.0);
  EXPECT_EQ(sut.samples(), 0u);
}

TEST(phi_detector, RegularHeartbeatsKeepPhiLow) {
  phi_detector sut{akka_defaults()};
  manual_time t;
  beat(sut, t, 20, 1s);
  // One interval after the last heartbeat: on time.
  EXPECT_LT(sut.phi(t.now + 1s), 0.5);
  EXPECT_NEAR(sut.mean_interval(), 1.0, 0.01);
}

TEST(phi_detector, PhiGrowsWithSilenceAndPassesEightWithinSixSeconds) {
  phi_detector sut{akka_defaults()};
  manual_time t;
  beat(sut, t, 20, 1s);
  double last = -1;
  for (int ms = 0; ms <= 8000; ms += 250) {
    auto phi = sut.phi(t.now + std::chrono::milliseconds{ms});
    EXPECT_GE(phi, last) << "at " << ms << " ms";
    last = phi;
  }
  // Mean 1 s + 3 s pause, deviation 0.1 s: still available at 4 s, long
  // gone at 5.5 s (Akka's figure for its defaults).
  EXPECT_TRUE(sut.available(t.now + 4s, 8.0));
  EXPECT_FALSE(sut.available(t.now + 5500ms, 8.0));
  EXPECT_TRUE(std::isfinite(sut.phi(t.now + 24h)));
  EXPECT_GT(sut.phi(t.now + 24h), 1000.0);
}

TEST(phi_detector, AMemberThatSentOneHeartbeatStillBecomesUnreachable) {
  phi_detector sut{akka_defaults()};
  manual_time t;
  sut.heartbeat(t.now);
  EXPECT_TRUE(sut.available(t.now + 2s, 8.0));
  EXPECT_FALSE(sut.available(t.now + 10s, 8.0));
}

TEST(phi_detector, SlowerHeartbeatsUnderLoadRaiseTheMeanNotPhi) {
  phi_detector sut{akka_defaults()};
  manual_time t;
  // A loaded member: heartbeats every 1 to 3 s, irregular.
  const phi_detector::duration gaps[] = {1s, 3s, 1500ms, 2500ms, 2s, 3s, 1s};
  for (int round = 0; round < 10; ++round)
    for (auto gap : gaps) {
      sut.heartbeat(t.now);
      t.advance(gap);
    }
  t.advance(-1s);
  // 5 s after the last heartbeat is late for this member, but not fatal.
  EXPECT_TRUE(sut.available(t.now + 5s, 8.0));
  EXPECT_GT(sut.mean_interval(), 1.9);
}

TEST(phi_detector, KeepsAtMostMaxSamplesIntervals) {
  auto cfg = akka_defaults();
  cfg.max_samples = 10;
  phi_detector sut{cfg};
  manual_time t;
  beat(sut, t, 100, 200ms);
  EXPECT_EQ(sut.samples(), 10u);
  // The seeded 1 s estimate has left the window: only 200 ms intervals.
  EXPECT_NEAR(sut.mean_interval(), 0.2, 1e-9);
}

TEST(phi_detector, AHeartbeatFromThePastIsIgnored) {
  phi_detector sut{akka_defaults()};
  manual_time t;
  sut.heartbeat(t.now);
  auto before = sut.samples();
  sut.heartbeat(t.now - 5s);
  EXPECT_EQ(sut.samples(), before);
  EXPECT_EQ(sut.phi(t.now - 10s), sut.phi(t.now));
}
