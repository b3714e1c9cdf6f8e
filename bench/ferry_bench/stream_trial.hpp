// A oneway or pingpong cell measured in rounds, over any channel.
//
// A *channel* is one sender's path to its receiver: a CAF scoped actor and
// the receiving actor (driver.cpp), or a plain socket (limit_runs.cpp). The
// stream trial owns the rounds and their bookkeeping, the same for every
// channel: a oneway stream keeps at most `window` messages unacknowledged
// and times each acknowledgement batch; a pingpong series times each round
// trip; the warm-up decides how many rounds the cell gets; the rate of each
// round and the latency quantiles go into the measurement.
//
// Not thread-safe: one trial runs on the driver's main thread.
#pragma once

#include "runs.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ferry::bench {

/// One sender's path to its receiver. Every call may fail; `error` then
/// says why.
class channel {
public:
  virtual ~channel() = default;

  /// Called before every reset of the receiver: in-process rows put a new
  /// receiver in place of the last (see main.cpp).
  virtual void renew() {}

  /// Makes the payload of the next messages; throws std::runtime_error when
  /// it cannot.
  virtual void load() = 0;

  /// Drops the payload (a store object per round, not one per trial).
  virtual void unload() = 0;

  /// Sends one one-way message; false on failure.
  virtual bool send() = 0;

  /// Waits up to `wait` for the next acknowledgement: returns the count it
  /// carries, or nothing when none came (then `error()` is empty) or on
  /// failure.
  virtual std::optional<uint64_t> next_ack(std::chrono::milliseconds wait) = 0;

  /// Makes one round trip (a request and its reply); false on failure.
  virtual bool round_trip(double timeout_seconds) = 0;

  const std::string& error() const { return error_; }

protected:
  std::string error_;
};

/// Checked between waits: returns a reason to give up (e.g. the link counted
/// a send error), or an empty string.
using failure_probe = std::function<std::string()>;

/// What a group adds to a trial: resetting its receiver (before the warm-up
/// and every round), a check between waits, the receiver's peak memory
/// after each round, and last figures after the last round (ferry's family
/// check).
struct trial_hooks {
  std::function<bool(uint64_t ack_every)> reset;
  failure_probe probe;
  /// Returns the receiver's peak resident memory since the last reset
  /// (MiB); read right after each round, before another trial of the same
  /// receiver resets it.
  std::function<double()> peak_rss;
  std::function<void(measurement&)> finish;
};

/// Returns a trial of `pat` over `ch` (see runs.hpp).
std::unique_ptr<trial> make_stream_trial(std::unique_ptr<channel> ch,
                                         pattern pat, const run_params& p,
                                         trial_hooks hooks);

/// Returns `m` completed with the figures of its rounds: ok when it has no
/// error and at least one round, `msgs_per_s` the median of `rates`, the
/// latency quantiles over `latencies_us`.
measurement summarize_rounds(measurement m, const std::vector<double>& rates,
                             const std::vector<double>& latencies_us);

/// Returns the median of `xs` (0 for none).
double median(std::vector<double> xs);

/// Returns the `q` quantile of `xs` (0 for none).
double quantile(std::vector<double> xs, double q);

} // namespace ferry::bench
