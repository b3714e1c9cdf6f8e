// The entity program (see entity_runs.hpp).
#include "entity_runs.hpp"

#include "stream_trial.hpp"

#include "ferry/test/ports.hpp"
#include "ferry/test/postgres_server.hpp"

#include "ferry/entities.hpp"
#include "ferry/entity.hpp"
#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include <unistd.h>

namespace ferry::bench {

namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

/// A counter entity's state.
struct tally {
  int64_t total = 0;
};

using payload = std::vector<std::byte>;

/// Answers a payload with its size (as the plain actor does).
caf::behavior echo_entity(ferry::entity<ferry::no_state>*) {
  return {[](const payload& x) {
    return uint64_t{x.size()};
  }};
}

/// Adds the payload's size to its total and answers once that is saved.
caf::behavior tally_entity(ferry::entity<tally>* self) {
  return {[self](const payload& x) -> caf::result<uint64_t> {
    self->state().total += static_cast<int64_t>(x.size());
    auto rp = self->make_response_promise<uint64_t>();
    self->save([rp](const caf::error& err) mutable {
      if (err)
        rp.deliver(err);
      else
        rp.deliver(uint64_t{1});
    });
    return rp;
  }};
}

caf::behavior plain_echo() {
  return {[](const payload& x) {
    return uint64_t{x.size()};
  }};
}

double micros(steady::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

/// Nodes of one cluster in this process, their state in `location`.
class bench_cluster {
public:
  bench_cluster(std::string location, size_t planned)
    : location_(std::move(location)),
      ports_(planned) {
    for (size_t i = 0; i < planned; ++i)
      addresses_.push_back("127.0.0.1:" + std::to_string(ports_[i]));
    ports_.release();
  }

  ~bench_cluster() {
    // Hosting members first (their entities save), the client last.
    while (!nodes_.empty())
      nodes_.pop_back();
  }

  /// Starts the next planned node: the client (hosting nothing) first.
  caf::expected<ferry::node*> add(bool hosting) {
    auto i = nodes_.size();
    auto cfg = std::make_unique<ferry::node_config>();
    cfg->node_name = (hosting ? "member-" : "client-") + std::to_string(i);
    cfg->store_enabled = false;
    cfg->cluster.name = "entities-bench";
    cfg->cluster.address = addresses_[i];
    cfg->cluster.seeds = {addresses_[0]};
    cfg->cluster.seed_timeout = 300ms;
    cfg->cluster.gossip_interval = 100ms;
    cfg->cluster.heartbeat_interval = 200ms;
    cfg->log_sink = [](const std::string&) {
    };
    cfg->entities.store = location_;
    cfg->entities.shards = 100;
    if (hosting) {
      cfg->add_entity_type<ferry::no_state>("echo", echo_entity);
      cfg->add_entity_type<tally>("tally", tally_entity);
    }
    auto n = ferry::node::start(*cfg);
    if (!n)
      return std::move(n.error());
    cfgs_.push_back(std::move(cfg));
    nodes_.push_back(std::move(*n));
    return nodes_.back().get();
  }

  /// Waits until every node sees `k` members up and the hosting ones hold
  /// all shards between them, steadily (two reads 300 ms apart agree).
  bool settle(size_t k, std::chrono::seconds timeout) {
    auto deadline = steady::now() + timeout;
    uint64_t last = 0;
    while (steady::now() < deadline) {
      auto up = std::all_of(nodes_.begin(), nodes_.end(), [&](auto& n) {
        auto ms = n->cluster().members();
        return static_cast<size_t>(
                 std::count_if(ms.begin(), ms.end(), [](auto& m) {
                   return m.status == ferry::member_status::up;
                 })) == k;
      });
      uint64_t held = 0;
      uint64_t buffered = 0;
      for (auto& n : nodes_) {
        auto s = n->entities().stats();
        held += s.shards_held;
        buffered += s.buffered;
      }
      auto signature = held * 1'000'000 + buffered;
      if (up && held == 100 && buffered == 0 && signature == last)
        return true;
      last = up ? signature : 0;
      std::this_thread::sleep_for(300ms);
    }
    return false;
  }

  ferry::node& client() { return *nodes_.front(); }

  ferry::node& member(size_t i) { return *nodes_[i]; }

  /// Returns the cluster port of node `i`.
  uint16_t port(size_t i) const { return ports_[i]; }

private:
  std::string location_;
  ferry::test::port_block ports_;
  std::vector<std::string> addresses_;
  std::vector<std::unique_ptr<ferry::node_config>> cfgs_;
  std::vector<std::unique_ptr<ferry::node>> nodes_;
};

/// What a pass of requests did.
struct pass {
  double per_s = 0;
  uint64_t errors = 0;
  std::string first_error;
};

/// Asks every actor of `to` once, at most `window` requests in flight.
pass pump(ferry::node& from, const std::vector<caf::actor>& to,
          uint64_t window) {
  caf::scoped_actor self{from.system()};
  pass result;
  payload msg(64);
  using handle = decltype(self->request(to.front(), 30s, msg));
  std::deque<handle> pending;
  auto take = [&] {
    pending.front().receive([](uint64_t) {},
                            [&](caf::error& err) {
                              if (result.errors++ == 0)
                                result.first_error = ferry::render(err);
                            });
    pending.pop_front();
  };
  auto began = steady::now();
  for (auto& x : to) {
    if (pending.size() >= window)
      take();
    pending.push_back(self->request(x, 30s, msg));
  }
  while (!pending.empty())
    take();
  auto took = std::chrono::duration<double>(steady::now() - began).count();
  result.per_s = static_cast<double>(to.size()) / took;
  return result;
}

/// Round-trip times (µs) of `n` requests, one after the other, to `to`.
std::vector<double> round_trips(ferry::node& from, const caf::actor& to,
                                uint64_t n, std::string& error) {
  caf::scoped_actor self{from.system()};
  payload msg(64);
  std::vector<double> result;
  for (uint64_t i = 0; i < n && error.empty(); ++i) {
    auto began = steady::now();
    self->request(to, 10s, msg)
      .receive(
        [&](uint64_t) { result.push_back(micros(steady::now() - began)); },
        [&](caf::error& err) { error = ferry::render(err); });
  }
  return result;
}

/// Handles of `type` for keys "<prefix>0".."<prefix>(n-1)".
std::vector<caf::actor> refs(ferry::node& n, const std::string& type,
                             const std::string& prefix, uint64_t count) {
  std::vector<caf::actor> result;
  for (uint64_t i = 0; i < count; ++i)
    if (auto x = n.entities().ref(type, prefix + std::to_string(i)))
      result.push_back(std::move(*x));
  return result;
}

entity_row row(std::string what, std::string store, std::string figure,
               double value, double baseline = 0) {
  return {std::move(what), std::move(store), std::move(figure),
          value,           baseline,         {}};
}

entity_row failed(std::string what, std::string store, std::string why) {
  entity_row r;
  r.what = std::move(what);
  r.store = std::move(store);
  r.error = std::move(why);
  return r;
}

/// Adds the throughput rows of `type` (store `store`) to `out`: a first
/// pass over fresh keys (activations) and a second over the same keys.
void throughput(ferry::node& client, const std::string& type,
                const std::string& store, const entity_options& opts,
                std::vector<entity_row>& out) {
  auto keys = refs(client, type, "t-", opts.keys);
  for (auto* figure : {"activating_requests_per_s", "active_requests_per_s"}) {
    auto p = pump(client, keys, opts.window);
    if (p.errors > 0)
      out.push_back(failed("throughput", store,
                           std::to_string(p.errors) + " of " +
                             std::to_string(keys.size()) +
                             " requests failed, the first: " + p.first_error));
    else
      out.push_back(row("throughput", store, figure, p.per_s));
  }
}

/// The rows of one store: round trips (stateless, once), activation
/// latency and throughput with saves.
void store_rows(const std::string& location, const std::string& store,
                const entity_options& opts, bool with_round_trip,
                std::vector<entity_row>& out) {
  bench_cluster c{location, 2};
  auto client = c.add(false);
  auto member = client ? c.add(true) : client;
  if (!member) {
    out.push_back(failed("throughput", store, ferry::render(member.error())));
    return;
  }
  if (!c.settle(2, 60s)) {
    out.push_back(
      failed("throughput", store, "the two nodes did not settle within 60 s"));
    return;
  }
  auto& from = c.client();
  if (with_round_trip) {
    // The member listens already (its cluster address): the plain actor is
    // exposed there, on the link the entity's calls take too.
    c.member(1).expose("bench.echo", c.member(1).system().spawn(plain_echo));
    auto plain = from.remote_actor("127.0.0.1", c.port(1), "bench.echo");
    auto entity = from.entities().ref("echo", "round-trip");
    std::string error;
    if (!plain || !entity) {
      error = ferry::render(!plain ? plain.error() : entity.error());
    } else {
      // Warm both ways up (the entity activates), then take turns.
      round_trips(from, *plain, 200, error);
      round_trips(from, *entity, 200, error);
      std::vector<double> p;
      std::vector<double> e;
      for (int turn = 0; turn < 5 && error.empty(); ++turn) {
        auto a = round_trips(from, *plain, opts.round_trips / 5, error);
        auto b = round_trips(from, *entity, opts.round_trips / 5, error);
        p.insert(p.end(), a.begin(), a.end());
        e.insert(e.end(), b.begin(), b.end());
      }
      if (error.empty()) {
        out.push_back(row("round_trip", "none", "p50_us", quantile(e, 0.5),
                          quantile(p, 0.5)));
        out.push_back(row("round_trip", "none", "p99_us", quantile(e, 0.99),
                          quantile(p, 0.99)));
      }
    }
    if (!error.empty())
      out.push_back(failed("round_trip", "none", error));
    throughput(from, "echo", "none", opts, out);
  }
  // Activation: the first request to a fresh key loads its (empty) state.
  std::string error;
  std::vector<double> first;
  for (auto& x : refs(from, "tally", "a-", opts.activation_keys)) {
    auto t = round_trips(from, x, 1, error);
    if (!error.empty())
      break;
    first.insert(first.end(), t.begin(), t.end());
  }
  if (error.empty()) {
    out.push_back(row("activation", store, "p50_us", quantile(first, 0.5)));
    out.push_back(row("activation", store, "p99_us", quantile(first, 0.99)));
  } else {
    out.push_back(failed("activation", store, error));
  }
  throughput(from, "tally", store, opts, out);
}

/// The rebalance row: four hosting members with `keys` active entities,
/// then a fifth.
void rebalance_row(const std::string& location, const entity_options& opts,
                   std::vector<entity_row>& out) {
  bench_cluster c{location, 6};
  caf::error err;
  for (size_t i = 0; i < 5 && !err; ++i)
    if (auto n = c.add(i > 0); !n)
      err = std::move(n.error());
  if (err) {
    out.push_back(failed("rebalance", "sqlite", ferry::render(err)));
    return;
  }
  if (!c.settle(5, 60s)) {
    out.push_back(
      failed("rebalance", "sqlite", "four members did not settle within 60 s"));
    return;
  }
  auto keys = refs(c.client(), "echo", "r-", opts.keys);
  if (auto p = pump(c.client(), keys, opts.window); p.errors > 0) {
    out.push_back(failed("rebalance", "sqlite", p.first_error));
    return;
  }
  auto began = steady::now();
  if (auto n = c.add(true); !n) {
    out.push_back(failed("rebalance", "sqlite", ferry::render(n.error())));
    return;
  }
  if (!c.settle(6, 120s)) {
    out.push_back(failed("rebalance", "sqlite",
                         "five members did not settle within 120 s"));
    return;
  }
  auto settled = steady::now();
  auto p = pump(c.client(), keys, opts.window);
  if (p.errors > 0) {
    out.push_back(failed("rebalance", "sqlite", p.first_error));
    return;
  }
  auto secs = [&](steady::time_point t) {
    return std::chrono::duration<double>(t - began).count();
  };
  out.push_back(row("rebalance", "sqlite", "settled_s", secs(settled)));
  out.push_back(row("rebalance", "sqlite", "answered_s", secs(steady::now())));
}

} // namespace

std::vector<entity_row> measure_entities(const entity_options& opts) {
  std::vector<entity_row> out;
  auto dir = std::filesystem::temp_directory_path() /
             ("ferry-bench-entities-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::cerr << "ferry-bench: entities on SQLite\n";
  store_rows("sqlite:" + (dir / "stores.db").string(), "sqlite", opts, true,
             out);
  std::cerr << "ferry-bench: entities on PostgreSQL\n";
  ferry::test::postgres_server_options pg;
  pg.database = "ferry_bench";
  auto server = ferry::test::postgres_server::start(pg);
  if (server.server) {
    store_rows("postgresql:" + server.server->conninfo(), "postgresql", opts,
               false, out);
  } else {
    out.push_back(failed("activation", "postgresql", server.error));
    out.push_back(failed("throughput", "postgresql", server.error));
  }
  server.server.reset();
  std::cerr << "ferry-bench: rebalancing " << opts.keys << " entities\n";
  rebalance_row("sqlite:" + (dir / "rebalance.db").string(), opts, out);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return out;
}

} // namespace ferry::bench
