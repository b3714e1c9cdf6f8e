// The sink and the driver (see driver.hpp).
#include "driver.hpp"

#include "ferry/errc.hpp"
#include "ferry/store/shared_array.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>

namespace ferry::bench {

namespace {

using clock_type = std::chrono::steady_clock;

/// Keeps the sink's reads of first and last bytes observable.
std::atomic<uint64_t> sink_checksum{0};

struct sink_state {
  uint64_t count = 0;
  uint64_t ack_every = 1;
  static inline const char* name = "bench.sink";
};

using sink_actor = caf::stateful_actor<sink_state>;

void on_payload(sink_actor* self, unsigned first, unsigned last) {
  sink_checksum.fetch_add(first + last, std::memory_order_relaxed);
  if (self->current_message_id().is_request()) {
    auto promise = self->make_response_promise();
    promise.deliver(now_ns());
    return;
  }
  auto& st = self->state;
  if (++st.count % st.ack_every == 0)
    self->send(caf::actor_cast<caf::actor>(self->current_sender()), st.count);
}

template <class Container>
void on_array(sink_actor* self, const Container& xs) {
  if (xs.empty()) {
    on_payload(self, 0, 0);
    return;
  }
  auto first = static_cast<unsigned>(static_cast<unsigned char>(xs[0]));
  auto last
    = static_cast<unsigned>(static_cast<unsigned char>(xs[xs.size() - 1]));
  on_payload(self, first, last);
}

caf::behavior sink(sink_actor* self) {
  return {
    [self](const std::vector<std::byte>& xs) { on_array(self, xs); },
    [self](const std::vector<char>& xs) { on_array(self, xs); },
    [self](const store::shared_array<std::byte>& xs) { on_array(self, xs); },
    [self](const bench_record& x) {
      unsigned first = x.values.empty() ? 0 : static_cast<unsigned>(x.values[0]);
      unsigned last
        = x.values.empty() ? 0 : static_cast<unsigned>(x.values.back());
      on_payload(self, first, last);
    },
    [self](reset_atom, uint64_t ack_every) {
      self->state.count = 0;
      self->state.ack_every = std::max<uint64_t>(1, ack_every);
      return self->state.count;
    },
  };
}

std::mutex cache_mtx;
std::map<std::pair<uint64_t, int>, caf::message> cache;

/// A scoped actor sending to a receiving actor: a plain CAF actor, a CAF
/// remote proxy or a ferry proxy.
class actor_channel final : public channel {
public:
  actor_channel(caf::actor_system& sys, const caf::actor& dest,
                std::function<caf::message()> make_payload,
                std::function<caf::actor()> new_sink)
    : self_(sys),
      dest_(dest),
      make_payload_(std::move(make_payload)),
      new_sink_(std::move(new_sink)) {
    // nop
  }

  void renew() override {
    if (new_sink_)
      dest_ = new_sink_();
  }

  void load() override {
    payload_ = make_payload_();
  }

  void unload() override {
    payload_ = caf::message{};
  }

  bool send() override {
    self_->send(dest_, payload_);
    return true;
  }

  std::optional<uint64_t> next_ack(std::chrono::milliseconds wait) override {
    std::optional<uint64_t> result;
    self_->receive([&](uint64_t count) { result = count; },
                   caf::after(wait) >> [] {});
    return result;
  }

  bool round_trip(double timeout_seconds) override {
    auto timeout = std::chrono::duration_cast<caf::timespan>(
      std::chrono::duration<double>(timeout_seconds));
    bool ok = false;
    self_->request(dest_, timeout, payload_)
      .receive([&](uint64_t) { ok = true; },
               [&](caf::error& err) { error_ = ferry::render(err); });
    return ok;
  }

private:
  caf::scoped_actor self_;
  caf::actor dest_;
  caf::message payload_;
  std::function<caf::message()> make_payload_;
  std::function<caf::actor()> new_sink_;
};

} // namespace

uint64_t now_ns() {
  return static_cast<uint64_t>(
    std::chrono::duration_cast<std::chrono::nanoseconds>(
      clock_type::now().time_since_epoch())
      .count());
}

void read_caf_application_ini(caf::actor_system_config& cfg) {
  char name[] = "ferry-bench";
  char* argv[] = {name, nullptr};
  static_cast<void>(cfg.parse(1, argv));
}

caf::actor spawn_sink(caf::actor_system& sys) {
  return sys.spawn(sink);
}

void replace_sink(caf::actor_system& sys, caf::actor& sink) {
  if (sink)
    caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
  sink = spawn_sink(sys);
}

bool reset_sink(caf::actor_system& sys, const caf::actor& sink,
                uint64_t ack_every) {
  caf::scoped_actor self{sys};
  bool ok = false;
  self->request(sink, std::chrono::seconds{10}, reset_atom::value, ack_every)
    .receive([&](uint64_t) { ok = true; }, [&](caf::error&) {});
  return ok;
}

caf::message bytes_message(uint64_t size, bool chars) {
  std::lock_guard<std::mutex> guard{cache_mtx};
  auto key = std::make_pair(size, chars ? 1 : 0);
  if (auto i = cache.find(key); i != cache.end())
    return i->second;
  auto msg = chars ? caf::make_message(make_bytes<char>(size))
                   : caf::make_message(make_bytes<std::byte>(size));
  cache.emplace(key, msg);
  return msg;
}

caf::message record_message(uint64_t size) {
  std::lock_guard<std::mutex> guard{cache_mtx};
  auto key = std::make_pair(size, 2);
  if (auto i = cache.find(key); i != cache.end())
    return i->second;
  auto msg = caf::make_message(make_record(size));
  cache.emplace(key, msg);
  return msg;
}

void clear_payload_cache() {
  std::lock_guard<std::mutex> guard{cache_mtx};
  cache.clear();
}

std::unique_ptr<trial> make_trial(caf::actor_system& sys,
                                  const caf::actor& dest,
                                  std::function<caf::message()> make_payload,
                                  pattern pat, const run_params& p,
                                  trial_hooks hooks,
                                  std::function<caf::actor()> new_sink) {
  return make_stream_trial(
    std::make_unique<actor_channel>(sys, dest, std::move(make_payload),
                                    std::move(new_sink)),
    pat, p, std::move(hooks));
}

double timed_request(caf::scoped_actor& self, const caf::actor& dest,
                     const caf::message& payload, double timeout_seconds,
                     std::string& error) {
  auto t0_ns = now_ns();
  double result = -1;
  auto timeout = std::chrono::duration_cast<caf::timespan>(
    std::chrono::duration<double>(timeout_seconds));
  self->request(dest, timeout, payload)
    .receive(
      [&](uint64_t t1_ns) {
        result = static_cast<double>(static_cast<int64_t>(t1_ns - t0_ns))
                 / 1000.0;
      },
      [&](caf::error& err) { error = ferry::render(err); });
  return result;
}

} // namespace ferry::bench
