// cluster: a coordinator hands out work to workers in other processes,
// watches them, and gives the work of a worker killed with `kill -9` to the
// others.
//
// This process runs the coordinator and starts three worker processes (the
// same program, --ferry.node-name=worker-N). Each worker connects to the
// coordinator and registers by sending its own actor handle: no names, no
// lookups. The coordinator monitors each worker through that handle and
// sends it jobs (squares to compute, a second each). Once every job is out,
// this process kills worker-1 with SIGKILL: the coordinator's requests to it
// fail, it hears the worker's down message (`remote_link_unreachable`), and
// sends that worker's unfinished jobs to the others. The program checks that
// every job came back right and exits 0. Run: ./cluster
//
// With --ferry.metrics.port=0 every process serves its metrics on a port
// of its own and prints it ("cluster: <node> serves metrics on
// 127.0.0.1:<port>"), for `ferry-top` or Prometheus (docs/monitoring.md).
#include "peer_process.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

constexpr int32_t job_count = 12;
constexpr int worker_count = 3;
constexpr const char* port_variable = "FERRY_SAMPLE_COORDINATOR_PORT";

// -- a worker ----------------------------------------------------------------

struct worker_state {
  std::map<int32_t, caf::response_promise> pending;
};

/// Squares each job after a second (one timer per job, no blocking).
caf::behavior worker(caf::stateful_actor<worker_state>* self) {
  return {
    [self](int32_t job) -> caf::result<int64_t> {
      self->state.pending[job] = self->make_response_promise();
      self->delayed_send(self, 1s, std::string{"finish"}, job);
      return caf::delegated<int64_t>{};
    },
    [self](const std::string&, int32_t job) {
      auto i = self->state.pending.find(job);
      if (i == self->state.pending.end())
        return;
      i->second.deliver(int64_t{job} * job);
      self->state.pending.erase(i);
    },
  };
}

int run_worker(ferry::node_config& cfg) {
  auto port = std::getenv(port_variable);
  auto n = ferry::node::start(cfg);
  if (!n || port == nullptr) {
    std::cerr << "cluster worker: "
              << (n ? "no coordinator port" : ferry::render(n.error()))
              << '\n';
    return 1;
  }
  auto coordinator = (*n)->remote_actor(
    "127.0.0.1", static_cast<uint16_t>(std::stoi(port)));
  if (!coordinator) {
    std::cerr << "cluster worker: " << ferry::render(coordinator.error())
              << '\n';
    return 1;
  }
  auto me = (*n)->system().spawn(worker);
  // Registering: the worker's own handle travels in the message.
  caf::scoped_actor self{(*n)->system()};
  bool welcome = false;
  self->request(*coordinator, 10s, std::string{"register"}, cfg.node_name, me)
    .receive([&](const std::string&) { welcome = true; },
             [&](const caf::error& err) {
               std::cerr << "cluster worker: " << ferry::render(err) << '\n';
             });
  if (!welcome)
    return 1;
  // A worker's standard output is its parent's pipe: say it on stderr.
  if (auto metrics = (*n)->metrics_port(); metrics != 0)
    std::cerr << "cluster: " << cfg.node_name << " serves metrics on "
              << cfg.metrics_address << ':' << metrics << std::endl;
  sample::serve_until_parent_exits(0);
  caf::anon_send_exit(me, caf::exit_reason::user_shutdown);
  return 0;
}

// -- the coordinator ---------------------------------------------------------

struct coordinator_state {
  /// Live workers by handle, with their node names.
  std::map<caf::actor, std::string> workers;
  /// Results by job, with the worker that computed them.
  std::map<int32_t, std::pair<int64_t, std::string>> done;
  int32_t sent = 0;
  int reassigned = 0;
  std::vector<std::string> lost;
  size_t next = 0;
};

using coordinator_actor = caf::stateful_actor<coordinator_state>;

/// Returns the next live worker, round robin.
caf::actor pick(coordinator_actor* self) {
  auto& workers = self->state.workers;
  auto i = workers.begin();
  std::advance(i, static_cast<long>(self->state.next++ % workers.size()));
  return i->first;
}

void assign(coordinator_actor* self, int32_t job) {
  if (self->state.workers.empty())
    return;
  auto whom = pick(self);
  self->request(whom, 10s, job).then(
    [self, job, name = self->state.workers[whom]](int64_t square) {
      self->state.done[job] = {square, name};
    },
    [self, job, whom](const caf::error&) {
      // The worker is gone (its node was killed): forget it, and give the
      // job to another.
      self->state.workers.erase(whom);
      ++self->state.reassigned;
      assign(self, job);
    });
}

caf::behavior coordinator(coordinator_actor* self) {
  self->set_down_handler([self](caf::down_msg& down) {
    for (auto i = self->state.workers.begin(); i != self->state.workers.end();
         ++i)
      if (i->first.address() == down.source) {
        self->state.lost.push_back(i->second + " ("
                                   + ferry::render(down.reason) + ")");
        self->state.workers.erase(i);
        break;
      }
  });
  return {
    [self](const std::string&, const std::string& name,
           const caf::actor& whom) {
      self->monitor(whom);
      self->state.workers.emplace(whom, name);
      if (self->state.workers.size() == worker_count)
        for (; self->state.sent < job_count; ++self->state.sent)
          assign(self, self->state.sent);
      return std::string{"welcome"};
    },
    // Status for this program: jobs sent, jobs done.
    [self](const std::string&) {
      return caf::make_message(self->state.sent,
                               static_cast<int32_t>(self->state.done.size()));
    },
    // The report at the end.
    [self](const std::string&, int32_t) {
      std::cout << "cluster: " << self->state.done.size() << " of "
                << job_count << " jobs done, " << self->state.reassigned
                << " reassigned\n";
      for (auto& lost : self->state.lost)
        std::cout << "cluster: lost " << lost << '\n';
      bool right = self->state.done.size() == job_count;
      for (auto& [job, result] : self->state.done) {
        std::cout << "cluster: " << job << "^2 = " << result.first << " by "
                  << result.second << '\n';
        right = right && result.first == int64_t{job} * job;
      }
      return right && self->state.reassigned > 0 && !self->state.lost.empty();
    },
  };
}

/// Asks the coordinator for (sent, done) until `until` holds or 30 s pass.
template <class Predicate>
bool wait_for(caf::scoped_actor& self, const caf::actor& coordinator,
              Predicate until) {
  for (int i = 0; i < 3000; ++i) {
    bool met = false;
    self->request(coordinator, 10s, std::string{"status"})
      .receive([&](int32_t sent, int32_t done) { met = until(sent, done); },
               [](const caf::error&) {});
    if (met)
      return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

} // namespace

int main(int argc, char** argv) {
  ferry::node_config cfg;
  // Jobs and results are small: no host store needed (options may still
  // turn it on).
  cfg.store_enabled = false;
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "cluster: " << ferry::render(err) << '\n';
    return 2;
  }
  if (cfg.node_name.rfind("worker-", 0) == 0)
    return run_worker(cfg);
  cfg.node_name = "coordinator";
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "cluster: " << ferry::render(n.error()) << '\n';
    return 1;
  }
  auto boss = (*n)->system().spawn(coordinator);
  auto port = (*n)->publish(boss);
  if (!port) {
    std::cerr << "cluster: " << ferry::render(port.error()) << '\n';
    return 1;
  }
  if (auto metrics = (*n)->metrics_port(); metrics != 0)
    std::cout << "cluster: coordinator serves metrics on "
              << cfg.metrics_address << ':' << metrics << std::endl;
  setenv(port_variable, std::to_string(*port).c_str(), 1);
  std::vector<std::unique_ptr<sample::peer_process>> workers;
  for (int i = 0; i < worker_count; ++i)
    workers.push_back(std::make_unique<sample::peer_process>(sample::peer_args(
      {argv + 1, argv + argc}, "worker-" + std::to_string(i))));
  caf::scoped_actor self{(*n)->system()};
  if (!wait_for(self, boss,
                [](int32_t sent, int32_t) { return sent == job_count; })) {
    std::cerr << "cluster: the workers did not all register\n";
    return 1;
  }
  // Every job is out, none is done (each takes a second): kill worker-1.
  std::cout << "cluster: killing worker-1 (pid " << workers[1]->pid()
            << ") with SIGKILL\n";
  kill(workers[1]->pid(), SIGKILL);
  wait_for(self, boss,
           [](int32_t, int32_t done) { return done == job_count; });
  bool ok = false;
  self->request(boss, 10s, std::string{"report"}, int32_t{0})
    .receive([&](bool right) { ok = right; }, [](const caf::error&) {});
  caf::anon_send_exit(boss, caf::exit_reason::user_shutdown);
  std::cout << (ok ? "cluster: every job done right despite the lost worker\n"
                   : "cluster: FAILED\n");
  return ok ? 0 : 1;
}
