// The rounds of a oneway or pingpong cell (see stream_trial.hpp).
#include "stream_trial.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>

namespace ferry::bench {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double micros_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - t0)
    .count();
}

/// One oneway stream or pingpong series over a channel.
class runner {
public:
  runner(channel& ch, const run_params& p, const failure_probe& probe)
    : ch_(ch), p_(p), probe_(probe) {
    // nop
  }

  /// Sends until `seconds` passed and at least `min_messages` went out
  /// (rounded up to whole acknowledgement batches); returns the messages
  /// sent, 0 on failure.
  uint64_t oneway(double seconds, uint64_t min_messages, bool record) {
    auto k = p_.ack_every;
    auto start_count = sent_;
    auto t0 = clock_type::now();
    bool stopping = false;
    while (!stopping || acked_ < sent_) {
      while (!stopping && sent_ - acked_ < p_.window) {
        // ferry encodes inside send(), CAF later: take the time before.
        // Only a batch's last message is timed, and only it reads the
        // clock (a read per message would cost the sender more than a
        // small message's encode).
        auto last_of_batch = (sent_ + 1) % k == 0;
        auto t = last_of_batch ? clock_type::now() : clock_type::time_point{};
        if (!ch_.send()) {
          error_ = ch_.error();
          return 0;
        }
        ++sent_;
        if (last_of_batch) {
          if (record)
            batches_.emplace_back(sent_, t);
          if (seconds_since(t0) >= seconds
              && sent_ - start_count >= min_messages)
            stopping = true;
        }
      }
      if (!wait_ack(record))
        return 0;
    }
    elapsed_ = seconds_since(t0);
    return sent_ - start_count;
  }

  /// Round trips until `seconds` passed and `min_messages` were made.
  uint64_t pingpong(double seconds, uint64_t min_messages, bool record) {
    uint64_t n = 0;
    auto t0 = clock_type::now();
    while (n < min_messages || seconds_since(t0) < seconds) {
      auto t = clock_type::now();
      if (!ch_.round_trip(p_.timeout_seconds)) {
        error_ = ch_.error();
        return 0;
      }
      if (record)
        latencies_.push_back(micros_since(t));
      ++n;
    }
    elapsed_ = seconds_since(t0);
    return n;
  }

  /// Starts counting from zero again (the receiver was reset); nothing is
  /// in flight between rounds.
  void restart() {
    sent_ = 0;
    acked_ = 0;
    batches_.clear();
  }

  double elapsed() const { return elapsed_; }
  const std::string& error() const { return error_; }
  std::vector<double>& latencies() { return latencies_; }

private:
  bool wait_ack(bool record) {
    auto t0 = clock_type::now();
    for (;;) {
      auto count = ch_.next_ack(std::chrono::milliseconds{500});
      if (count) {
        auto now = clock_type::now();
        while (!batches_.empty() && batches_.front().first <= *count) {
          if (record && batches_.front().first == *count)
            latencies_.push_back(std::chrono::duration<double, std::micro>(
                                   now - batches_.front().second)
                                   .count());
          batches_.pop_front();
        }
        acked_ = std::max(acked_, *count);
        return true;
      }
      if (!ch_.error().empty()) {
        error_ = ch_.error();
        return false;
      }
      if (probe_) {
        if (auto why = probe_(); !why.empty()) {
          error_ = why;
          return false;
        }
      }
      if (seconds_since(t0) > p_.timeout_seconds) {
        error_ = "no acknowledgement within "
                 + std::to_string(static_cast<int>(p_.timeout_seconds))
                 + " s (" + std::to_string(acked_) + " of "
                 + std::to_string(sent_) + " acknowledged)";
        return false;
      }
    }
  }

  channel& ch_;
  run_params p_;
  const failure_probe& probe_;
  uint64_t sent_ = 0;
  uint64_t acked_ = 0;
  std::deque<std::pair<uint64_t, clock_type::time_point>> batches_;
  std::vector<double> latencies_;
  double elapsed_ = 0;
  std::string error_;
};

class stream_trial final : public trial {
public:
  stream_trial(std::unique_ptr<channel> ch, pattern pat, const run_params& p,
               trial_hooks hooks)
    : ch_(std::move(ch)),
      pat_(pat),
      p_(p),
      hooks_(std::move(hooks)),
      runner_(*ch_, p_, hooks_.probe) {
    // nop
  }

  bool warm_up() override {
    if (!reset())
      return false;
    auto per_message = untimed(p_.warmup_seconds, p_.warmup_messages,
                               "warm-up");
    if (per_message < 0)
      return false;
    // A cell whose messages take longer than its budget allows measures one
    // round of as few messages as its acknowledgements allow.
    rounds_ = p_.repeats;
    min_messages_ = p_.min_messages;
    // A oneway round ends on a whole acknowledgement batch, and so does its
    // untimed message: a 1 MiB round sends 32 messages, not 2.
    auto batch = pat_ == pattern::oneway ? p_.ack_every : uint64_t{1};
    auto per_round = (min_messages_ + batch - 1) / batch * batch
                     + (p_.warm_each_round ? round_warm_up() : 0);
    auto limit = p_.slow_cell_seconds
                 / static_cast<double>(per_round
                                       * static_cast<uint64_t>(rounds_));
    // The first message of a large row can be several times slower than the
    // rest (fresh pages after the row before it: tcp 1 GiB raw, warmed up
    // right after CAF's, was a one-round cell in three runs of three). A
    // cell within three times its budget measures once more and keeps the
    // faster figure; a truly slow one (cereal.json at 64 MiB) does not.
    if (per_message > limit && per_message <= 3 * limit) {
      auto again = untimed(0, 1, "warm-up");
      if (again < 0)
        return false;
      per_message = std::min(per_message, again);
    }
    if (per_message > limit) {
      rounds_ = 1;
      min_messages_ = 1;
    }
    return true;
  }

  int rounds() const override { return rounds_; }

  bool round() override {
    if (!reset())
      return false;
    if (p_.warm_each_round
        && untimed(0, round_warm_up(), "warm-up of a round") < 0)
      return false;
    auto n = once(p_.seconds / rounds_, min_messages_, true);
    if (n == 0) {
      m_.error = why();
      return false;
    }
    m_.messages += n;
    m_.seconds += runner_.elapsed();
    rates_.push_back(static_cast<double>(n) / runner_.elapsed());
    // Read right after the round: the other trials of this receiver reset
    // its peak before their rounds, so read after all rounds a row would
    // show another row's peak.
    if (hooks_.peak_rss)
      m_.rss_mb = hooks_.peak_rss();
    return true;
  }

  measurement result() override {
    auto m = summarize_rounds(m_, rates_, runner_.latencies());
    if (m.ok && hooks_.finish)
      hooks_.finish(m);
    return m;
  }

private:
  bool reset() {
    runner_.restart();
    ch_->renew();
    if (hooks_.reset && !hooks_.reset(p_.ack_every)) {
      m_.error = "the receiver did not answer a reset";
      return false;
    }
    return true;
  }

  /// Sends with a payload made for this call and dropped after it, so the
  /// trials of one set hold no store objects between their turns.
  uint64_t once(double seconds, uint64_t min_messages, bool record) {
    try {
      ch_->load();
    } catch (std::exception& e) {
      payload_error_ = e.what();
      return 0;
    }
    auto n = pat_ == pattern::oneway
               ? runner_.oneway(seconds, min_messages, record)
               : runner_.pingpong(seconds, min_messages, record);
    ch_->unload();
    return n;
  }

  /// Untimed messages at the start of a round: as many as the round itself
  /// keeps in flight, so the receiver holds as many buffers as the timed
  /// messages need. For oneway one window's worth, or one acknowledgement
  /// batch in a slow cell (its round is that one batch); one for pingpong.
  uint64_t round_warm_up() const {
    if (pat_ != pattern::oneway)
      return 1;
    return rounds_ == 1 && min_messages_ == 1 ? p_.ack_every : p_.window;
  }

  /// Sends untimed messages (see `once`); returns the seconds per message,
  /// or -1 after recording "<what> failed: <why>" as the cell's error.
  double untimed(double seconds, uint64_t min_messages, const char* what) {
    auto n = once(seconds, min_messages, false);
    if (n == 0) {
      m_.error = std::string{what} + " failed: " + why();
      return -1;
    }
    return runner_.elapsed() / static_cast<double>(n);
  }

  /// Returns why the last `once` sent nothing.
  std::string why() const {
    return payload_error_.empty() ? runner_.error() : payload_error_;
  }

  std::unique_ptr<channel> ch_;
  std::string payload_error_;
  pattern pat_;
  run_params p_;
  trial_hooks hooks_;
  runner runner_;
  int rounds_ = 1;
  uint64_t min_messages_ = 1;
  std::vector<double> rates_;
  measurement m_;
};

} // namespace

std::unique_ptr<trial> make_stream_trial(std::unique_ptr<channel> ch,
                                         pattern pat, const run_params& p,
                                         trial_hooks hooks) {
  return std::make_unique<stream_trial>(std::move(ch), pat, p,
                                        std::move(hooks));
}

measurement summarize_rounds(measurement m, const std::vector<double>& rates,
                             const std::vector<double>& latencies_us) {
  m.ok = m.error.empty() && !rates.empty();
  if (!m.ok)
    return m;
  m.msgs_per_s = median(rates);
  m.round_rates = rates;
  m.p50_us = quantile(latencies_us, 0.5);
  m.p99_us = quantile(latencies_us, 0.99);
  return m;
}

double median(std::vector<double> xs) {
  return quantile(std::move(xs), 0.5);
}

double quantile(std::vector<double> xs, double q) {
  if (xs.empty())
    return 0;
  std::sort(xs.begin(), xs.end());
  auto pos = q * static_cast<double>(xs.size() - 1);
  auto lo = static_cast<size_t>(pos);
  auto hi = std::min(lo + 1, xs.size() - 1);
  auto frac = pos - static_cast<double>(lo);
  return xs[lo] * (1 - frac) + xs[hi] * frac;
}

} // namespace ferry::bench
