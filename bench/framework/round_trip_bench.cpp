// The cost of one request/response between two nodes, ferry against CAF.
//
// Two actor systems in this process talk over the middleman on loopback:
//   BM_round_trip/raw-caf/<bytes>        plain CAF, a std::vector<char>
//                                        request, a uint64_t reply
//   BM_round_trip/<family>/<bytes>       two ferry nodes (one host store), a
//                                        std::vector<std::byte> request and a
//                                        uint64_t reply, both encoded with
//                                        the family, through a same-host lane
//   BM_round_trip/tcp:<family>/<bytes>   the same through the nodes' TCP
//                                        connection (lanes off)
//   BM_round_trip/tls:<family>/<bytes>   the same over TLS (certificates of
//                                        the test PKI, made at first use)
// Payloads of 64 B and 4 KiB. Each iteration is one round trip from a
// blocking scoped actor, so the time includes CAF's thread hand-offs (the
// scheduler's polling dominates it; ferry-bench measures the same across
// processes).
//
// Timings here are as noisy as the machine. What does not move is the
// number of instructions a round trip takes: run a row twice under
// callgrind with different fixed iteration counts and divide the
// difference of the totals by the difference of the counts, e.g.
//
//   valgrind --tool=callgrind --callgrind-out-file=a ferry_round_trip_bench
//     --benchmark_filter='BM_round_trip/cereal.binary/64/' --round_trips=500
//   (and again with --round_trips=2500 into b; one command line each)
//
// then (total(b) - total(a)) / 2000. The same for BM_round_trip/raw-caf/64 is
// CAF's share; callgrind_annotate --inclusive=yes shows where ferry's share
// goes (remote_proxy::enqueue on the sending side, gateway::enqueue and
// wire_message::load on the receiving side). Figures are in
// docs/architecture.md ("Per-message CPU").
#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/node_config.hpp"
#include "ferry/store/object_store.hpp"

#include <benchmark/benchmark.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;

caf::behavior echo(caf::event_based_actor*) {
  return {
    [](const std::vector<std::byte>& xs) -> uint64_t { return xs.size(); },
    [](const std::vector<char>& xs) -> uint64_t { return xs.size(); },
  };
}

/// A sender and a receiver in two actor systems of this process.
class endpoints {
public:
  virtual ~endpoints() = default;

  /// Makes one round trip with `msg`; returns the reply.
  uint64_t round_trip(const caf::message& msg) {
    uint64_t result = 0;
    (*self_)->request(dest_, 10s, msg)
      .receive([&](uint64_t x) { result = x; },
               [&](const caf::error& err) {
                 throw std::runtime_error(caf::to_string(err));
               });
    return result;
  }

protected:
  /// Ends the echo actor and drops the handles (before the systems go).
  void stop() {
    caf::anon_send_exit(echo_, caf::exit_reason::user_shutdown);
    self_.reset();
    dest_ = nullptr;
    echo_ = nullptr;
  }

  std::unique_ptr<caf::scoped_actor> self_;
  caf::actor dest_;
  caf::actor echo_;
};

class caf_endpoints final : public endpoints {
public:
  caf_endpoints() {
    cfg_a_.load<caf::io::middleman>();
    cfg_b_.load<caf::io::middleman>();
    a_ = std::make_unique<caf::actor_system>(cfg_a_);
    b_ = std::make_unique<caf::actor_system>(cfg_b_);
    auto e = a_->spawn(echo);
    auto port = a_->middleman().publish(e, 0, "127.0.0.1");
    if (!port)
      throw std::runtime_error("publish failed");
    auto peer = b_->middleman().remote_actor("127.0.0.1", *port);
    if (!peer)
      throw std::runtime_error("remote_actor failed");
    dest_ = *peer;
    self_ = std::make_unique<caf::scoped_actor>(*b_);
    echo_ = e;
  }

  ~caf_endpoints() override {
    stop();
  }

private:
  caf::actor_system_config cfg_a_;
  caf::actor_system_config cfg_b_;
  std::unique_ptr<caf::actor_system> a_;
  std::unique_ptr<caf::actor_system> b_;
};

/// How two ferry nodes of this process reach each other.
enum class way { lane, tcp, tls };

/// The test PKI's certificates for the two nodes, in a directory of their
/// own, removed with them.
struct pki_files {
  std::string dir = "/tmp/ferry-round-trip-pki-" + std::to_string(getpid());

  pki_files() {
    auto command = std::string{FERRY_PKI_SCRIPT} + " " + dir +
                   " round-trip-a round-trip-b > /dev/null";
    if (std::system(command.c_str()) != 0) {
      remove();
      throw std::runtime_error("make_test_pki.sh failed (is openssl "
                               "installed?)");
    }
  }

  ~pki_files() {
    remove();
  }

  void remove() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

/// Returns the directory of the certificates (made at the first call).
const std::string& pki_dir() {
  static pki_files files;
  return files.dir;
}

class ferry_endpoints final : public endpoints {
public:
  ferry_endpoints(const std::string& family, const std::string& store_name,
                  way how) {
    auto setup = [&](ferry::node_config& cfg, const char* name) {
      cfg.node_name = name;
      cfg.store_name = store_name;
      cfg.store_capacity = 64 << 20;
      cfg.default_link.serializers = {family};
      cfg.default_link.deserializers = {family};
      cfg.default_link.lane = how == way::lane;
      if (how == way::tls) {
        auto& dir = pki_dir();
        cfg.tls_certificate = dir + "/" + name + ".pem";
        cfg.tls_key = dir + "/" + name + ".key";
        cfg.tls_ca_file = dir + "/ca.pem";
      }
    };
    setup(cfg_a_, "round-trip-a");
    setup(cfg_b_, "round-trip-b");
    auto a = ferry::node::start(cfg_a_);
    auto b = ferry::node::start(cfg_b_);
    if (!a || !b)
      throw std::runtime_error("cannot start the nodes");
    a_ = std::move(*a);
    b_ = std::move(*b);
    echo_ = a_->system().spawn(echo);
    auto port = a_->publish(echo_);
    if (!port)
      throw std::runtime_error("publish failed");
    auto peer = b_->remote_actor("127.0.0.1", *port);
    if (!peer)
      throw std::runtime_error("remote_actor failed: " +
                               ferry::render(peer.error()));
    dest_ = *peer;
    self_ = std::make_unique<caf::scoped_actor>(b_->system());
  }

  ~ferry_endpoints() override {
    stop();
    b_.reset();
    a_.reset();
  }

private:
  ferry::node_config cfg_a_;
  ferry::node_config cfg_b_;
  std::unique_ptr<ferry::node> a_;
  std::unique_ptr<ferry::node> b_;
};

/// Times round trips of `msg` over the endpoints `make` returns (made on
/// first use: a row filtered out costs nothing).
template <class Make>
void run(benchmark::State& state, std::unique_ptr<endpoints>& ends, Make make,
         const caf::message& msg) {
  try {
    if (!ends)
      ends = make();
    // Untimed warm-up: proxies, buffers and caches exist before the first
    // measured round trip.
    for (int i = 0; i < 100; ++i)
      benchmark::DoNotOptimize(ends->round_trip(msg));
    for (auto _ : state)
      benchmark::DoNotOptimize(ends->round_trip(msg));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

/// Removes the bench's store when the program ends.
struct store_remover {
  std::string name;
  ~store_remover() {
    static_cast<void>(ferry::store::object_store::remove(name));
  }
};

} // namespace

int main(int argc, char** argv) {
  // --round_trips=N fixes every row's iteration count (for callgrind).
  int64_t fixed = 0;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--round_trips=", 14) == 0)
      fixed = std::atoll(argv[i] + 14);
    else
      args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  store_remover remover{"ferry-round-trip-bench-" + std::to_string(getpid())};
  const std::vector<std::string> families{"cereal.binary", "caf", "msgpack",
                                          "raw"};
  const std::vector<size_t> sizes{64, 4096};
  // Endpoints live until the end of main.
  std::unique_ptr<endpoints> caf_ends;
  std::vector<std::unique_ptr<endpoints>> ferry_ends(families.size());
  // The tcp and tls rows (cereal.binary only).
  std::unique_ptr<endpoints> tcp_ends;
  std::unique_ptr<endpoints> tls_ends;
  std::vector<caf::message> bytes_msgs;
  std::vector<caf::message> chars_msgs;
  for (auto size : sizes) {
    bytes_msgs.push_back(
      caf::make_message(std::vector<std::byte>(size, std::byte{7})));
    chars_msgs.push_back(caf::make_message(std::vector<char>(size, 7)));
  }
  auto add = [&](std::string name, auto body) {
    auto* b = benchmark::RegisterBenchmark(name.c_str(), body);
    b->Unit(benchmark::kMicrosecond)->UseRealTime();
    if (fixed > 0)
      b->Iterations(fixed);
  };
  for (size_t s = 0; s < sizes.size(); ++s) {
    auto size = std::to_string(sizes[s]);
    add("BM_round_trip/raw-caf/" + size, [&, s](benchmark::State& state) {
      run(
        state, caf_ends, [] { return std::make_unique<caf_endpoints>(); },
        chars_msgs[s]);
    });
    for (size_t f = 0; f < families.size(); ++f)
      add("BM_round_trip/" + families[f] + "/" + size,
          [&, s, f](benchmark::State& state) {
            run(
              state, ferry_ends[f],
              [&, f] {
                return std::make_unique<ferry_endpoints>(
                  families[f], remover.name, way::lane);
              },
              bytes_msgs[s]);
          });
    for (auto how : {way::tcp, way::tls}) {
      auto& ends = how == way::tcp ? tcp_ends : tls_ends;
      add(std::string{"BM_round_trip/"} + (how == way::tcp ? "tcp" : "tls") +
            ":cereal.binary/" + size,
          [&, s, how](benchmark::State& state) {
            run(
              state, ends,
              [&, how] {
                return std::make_unique<ferry_endpoints>("cereal.binary",
                                                         remover.name, how);
              },
              bytes_msgs[s]);
          });
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
