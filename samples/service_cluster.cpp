// service_cluster: a worker pool that forms a cluster, found through the
// cluster registry, surviving a worker's `kill -9` and a graceful leave.
//
// This process is the client and the cluster's first seed; it starts three
// worker processes (the same program, --ferry.node-name=worker-N), which
// join the cluster through it and register their worker actor under the key
// "squares". The client never connects to a worker by hand: it subscribes
// to "squares" and sends each job (a number to square) to the next worker
// of the latest listing; a request that fails goes to another worker.
// Midway this process kills worker-1 with SIGKILL (the cluster marks it
// unreachable, downs it, and its entry leaves the registry), then sends
// worker-2 SIGTERM: a worker leaves the cluster on SIGTERM (`cluster::leave`),
// waits until the others removed it, and exits. The program prints the
// member events it hears, checks that every job came back right, and exits
// 0. Run: ./service_cluster
//
// The cluster runs with short intervals (gossip and heartbeats every 200 ms,
// unreachable members downed after 2 s) so that the sample ends in seconds;
// docs/cluster.md gives the defaults.
#include "peer_process.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

constexpr int32_t job_count = 60;
constexpr int worker_count = 3;
constexpr const char* key = "squares";

/// Sets the cluster's options: this node at `port`, the seed at
/// `seed_port`, short intervals.
void join_settings(ferry::node_config& cfg, uint16_t port, uint16_t seed_port) {
  cfg.cluster.name = "service";
  cfg.cluster.address = "127.0.0.1:" + std::to_string(port);
  cfg.cluster.seeds = {"127.0.0.1:" + std::to_string(seed_port)};
  cfg.cluster.seed_timeout = 500ms;
  cfg.cluster.gossip_interval = 200ms;
  cfg.cluster.heartbeat_interval = 200ms;
  cfg.cluster.acceptable_pause = 600ms;
  cfg.cluster.stable_after = 2s;
  cfg.store_enabled = false;
}

// -- a worker ----------------------------------------------------------------

/// Squares numbers, a little slowly.
caf::behavior worker() {
  return {
    [](int32_t x) {
      std::this_thread::sleep_for(20ms);
      return x * x;
    },
  };
}

/// Whether this node has seen itself removed from the cluster.
struct leave_state {
  std::string address;
  std::shared_ptr<std::atomic<bool>> removed;
};

caf::behavior removal_watcher(caf::stateful_actor<leave_state>* self,
                              std::string address,
                              std::shared_ptr<std::atomic<bool>> removed) {
  self->state.address = std::move(address);
  self->state.removed = std::move(removed);
  return {
    [self](const ferry::member_removed& x) {
      if (x.member.address == self->state.address)
        self->state.removed->store(true);
    },
    [](const ferry::member_up&) {},
    [](const ferry::member_down&) {},
    [](const ferry::member_unreachable&) {},
    [](const ferry::member_reachable&) {},
    [](const ferry::members_converged&) {},
  };
}

/// A worker process: joins, registers, serves until stdin closes or
/// SIGTERM, when it leaves the cluster first.
int run_worker(ferry::node_config& cfg, uint16_t port) {
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "service_cluster: " << ferry::render(n.error()) << '\n';
    return 1;
  }
  auto& node = **n;
  auto removed = std::make_shared<std::atomic<bool>>(false);
  auto watcher =
    node.system().spawn(removal_watcher, cfg.cluster.address, removed);
  node.cluster().watch_members(watcher);
  auto me = node.system().spawn(worker);
  if (auto ok = node.cluster().register_actor(key, me); !ok) {
    std::cerr << "service_cluster: " << ferry::render(ok.error()) << '\n';
    return 1;
  }
  sample::serve_until_told(port);
  node.cluster().leave();
  for (int i = 0; i < 250 && !removed->load(); ++i)
    std::this_thread::sleep_for(20ms);
  caf::anon_send_exit(me, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(watcher, caf::exit_reason::user_shutdown);
  return removed->load() ? 0 : 3;
}

// -- the client --------------------------------------------------------------

/// Prints the member events.
caf::behavior event_printer() {
  auto print = [](const char* what, const ferry::member_info& m) {
    std::cout << "service_cluster: " << m.name << " " << what << "\n";
  };
  return {
    [=](const ferry::member_up& x) { print("up", x.member); },
    [=](const ferry::member_unreachable& x) { print("unreachable", x.member); },
    [=](const ferry::member_reachable& x) { print("reachable", x.member); },
    [=](const ferry::member_down& x) { print("down", x.member); },
    [=](const ferry::member_removed& x) { print("removed", x.member); },
    [](const ferry::members_converged&) {},
  };
}

/// Asks the workers under `key` to square `x`, trying each once; returns
/// the answer or the last error.
caf::expected<int32_t> square(ferry::node& n, caf::scoped_actor& self,
                              int32_t x, size_t& next) {
  auto workers = n.cluster().find_actors(key);
  if (!workers)
    return std::move(workers.error());
  caf::error last = caf::make_error(
    ferry::errc::no_such_actor, "no worker under '" + std::string{key} + "'");
  for (size_t tries = 0; tries < workers->size(); ++tries) {
    auto& whom = (*workers)[next++ % workers->size()];
    caf::expected<int32_t> result{caf::make_error(caf::sec::request_timeout)};
    self->request(whom, 5s, x)
      .receive([&](int32_t y) { result = y; },
               [&](caf::error& err) { result = std::move(err); });
    if (result)
      return result;
    last = result.error();
  }
  return last;
}

/// Waits up to 30 s until `n` finds `count` workers.
bool wait_for_workers(ferry::node& n, size_t count) {
  for (int i = 0; i < 1500; ++i) {
    auto found = n.cluster().find_actors(key);
    if (found && found->size() == count)
      return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

int run_client(ferry::node_config& cfg, const std::vector<std::string>& args,
               uint16_t port) {
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "service_cluster: " << ferry::render(n.error()) << '\n';
    return 1;
  }
  auto& node = **n;
  auto printer = node.system().spawn(event_printer);
  node.cluster().watch_members(printer);
  std::vector<std::unique_ptr<sample::peer_process>> workers;
  for (int i = 1; i <= worker_count; ++i) {
    auto worker_args = sample::peer_args(args, "worker-" + std::to_string(i));
    worker_args.push_back("--worker-port=" +
                          std::to_string(sample::free_port()));
    worker_args.push_back("--seed-port=" + std::to_string(port));
    workers.push_back(std::make_unique<sample::peer_process>(worker_args));
  }
  if (!wait_for_workers(node, worker_count)) {
    std::cerr << "service_cluster: the workers never registered\n";
    return 1;
  }
  std::cout << "service_cluster: " << worker_count << " workers under '" << key
            << "'\n";
  caf::scoped_actor self{node.system()};
  size_t next = 0;
  int wrong = 0;
  for (int32_t x = 1; x <= job_count; ++x) {
    if (x == job_count / 3) {
      std::cout << "service_cluster: kill -9 worker-1\n";
      ::kill(workers[0]->pid(), SIGKILL);
    }
    if (x == 2 * job_count / 3) {
      std::cout << "service_cluster: SIGTERM to worker-2 (it leaves)\n";
      ::kill(workers[1]->pid(), SIGTERM);
    }
    auto y = square(node, self, x, next);
    if (!y || *y != x * x) {
      std::cerr << "service_cluster: job " << x << " failed: "
                << (y ? std::to_string(*y) : ferry::render(y.error())) << '\n';
      ++wrong;
    }
  }
  // The registry forgets the killed worker once it is downed, and the one
  // that left once it is removed.
  bool one_left = wait_for_workers(node, 1);
  std::cout << "service_cluster: " << job_count - wrong << " of " << job_count
            << " jobs right; "
            << (one_left ? "one worker left under '" + std::string{key} + "'"
                         : "the registry still lists departed workers")
            << std::endl;
  caf::anon_send_exit(printer, caf::exit_reason::user_shutdown);
  workers.clear();
  return wrong == 0 && one_left ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  // --worker-port and --seed-port mark a worker process; the rest of the
  // arguments are ferry's.
  std::vector<std::string> args;
  std::vector<char*> ferry_argv{argv[0]};
  uint16_t worker_port = 0;
  uint16_t seed_port = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--worker-port=", 0) == 0)
      worker_port = static_cast<uint16_t>(std::stoi(arg.substr(14)));
    else if (arg.rfind("--seed-port=", 0) == 0)
      seed_port = static_cast<uint16_t>(std::stoi(arg.substr(12)));
    else {
      args.push_back(arg);
      ferry_argv.push_back(argv[i]);
    }
  }
  ferry::node_config cfg;
  if (auto err =
        cfg.parse(static_cast<int>(ferry_argv.size()), ferry_argv.data())) {
    std::cerr << "service_cluster: " << ferry::render(err) << '\n';
    return 2;
  }
  if (worker_port != 0) {
    join_settings(cfg, worker_port, seed_port);
    return run_worker(cfg, worker_port);
  }
  auto port = sample::free_port();
  join_settings(cfg, port, port);
  bool named = false;
  for (auto& arg : args)
    named |= arg.rfind("--ferry.node-name=", 0) == 0;
  if (!named)
    cfg.node_name = "client";
  return run_client(cfg, args, port);
}
