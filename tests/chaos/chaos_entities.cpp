// One entity member of the chaos run (chaos_test.cpp): a cluster member
// (e1..e5, beside node n<i> on host i) that hosts the entity type
// `chaos.account` with its state in the run's PostgreSQL database and runs
// the entity workload against every account, writing each event to its
// history (history.hpp lists the events, entity_checks.hpp the invariants).
//
// An account keeps the ids of the operations it applied, in order. An
// operation it holds already (sent again after its answer was lost) is not
// applied again; every operation is answered once a save holding it
// committed. The workload: --chaos-workers threads, each owning the keys
// `a<k>` with k % workers == its number, send one operation at a time to a
// random key of theirs, every --chaos-tick-ms; an operation whose call fails
// is sent again (same id, same key) until it is acknowledged, so the ops
// one incarnation sends one key are applied in the order sent. Operation
// ids are `<inc>/<n>`, n counting up in the incarnation.
//
// A member that sees itself downed (a partition left it in the minority, or
// it was stopped past the others' patience) stops its node, writes `note
// downed` and `end`, and exits 0: the driver starts it again once the
// network is whole (a downed member comes back only as a new incarnation).
//
// With --chaos-dump the process is the run's checker instead: a member of
// a cluster of its own, started once every other member left, that reads
// every account's stored operations through fresh activations and writes
// one `estate` line each.
//
// Flags: --chaos-index=<0..4> --chaos-hosts=<a1,...,a5> --chaos-port=<p>
// --chaos-history=<dir> --chaos-stderr=<file> --chaos-keys=<n>
// --chaos-workers=<w> --chaos-tick-ms=<ms> --chaos-dump; the rest are
// ferry's and CAF's. It prints "started <inc>", then answers each line of
// stdin with one line:
//   up       "up <n>": the members up in its view
//   quiet    "quiet <unacked>": stops the workload once every operation in
//            flight is acknowledged (60 s at most; <unacked> gave up)
//   dump     (checker) "dumped <keys> <unread>": writes the `estate` lines
// It leaves the cluster, writes `end` and exits 0 when stdin closes.
#include "chaos_actors.hpp"
#include "process_flags.hpp"

#include "ferry/entities.hpp"
#include "ferry/entity.hpp"
#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

namespace {

using namespace std::chrono_literals;
using namespace ferry::chaos;
using apply_atom = caf::atom_constant<caf::atom("apply")>;
using ops_atom = caf::atom_constant<caf::atom("ops")>;

/// An account's state: the operations it applied, in order.
struct account {
  std::vector<std::string> ops;
};

/// The --chaos-* flags: the common ones and the member's own.
struct options : process_flags {
  options() { port = 7402; }

  uint64_t keys = 2000;
  uint64_t workers = 2;
  int tick_ms = 20;
  bool dump = false;
};

/// Takes the --chaos-* flags out of `args`; returns what is wrong with them.
std::string take_options(std::vector<std::string>& args, options& opts) {
  auto why = take_flags(args, opts, [&](const std::string& key,
                                        const std::string& value) {
    if (key == "dump")
      opts.dump = true;
    else if (key == "keys")
      opts.keys = std::stoull(value);
    else if (key == "workers")
      opts.workers = std::stoull(value);
    else if (key == "tick-ms")
      opts.tick_ms = std::stoi(value);
    else
      return false;
    return true;
  });
  if (why.empty() && (opts.workers == 0 || opts.keys < opts.workers))
    why = "--chaos-keys must be at least --chaos-workers, which is above 0";
  return why;
}

/// What the account activations write to (one incarnation per process).
struct activations {
  std::shared_ptr<history_log> log;
  std::string inc;
  std::atomic<uint64_t> count{0};
};

activations& here() {
  static activations x;
  return x;
}

caf::behavior account_behavior(ferry::entity<account>* self) {
  auto aid = here().inc + "/a" + std::to_string(++here().count);
  here().log->write("act " + self->key() + " " + aid);
  self->attach_functor([aid] { here().log->write("deact " + aid); });
  return {
    [self, aid](apply_atom, const std::string& op) -> caf::result<uint64_t> {
      auto& ops = self->state().ops;
      if (std::find(ops.begin(), ops.end(), op) == ops.end()) {
        ops.push_back(op);
        here().log->write("apply " + aid + " " + op);
      }
      // Sent again, it was applied before, but the save that held it may
      // have failed: it too is answered once a save holding it committed.
      auto rp = self->make_response_promise<uint64_t>();
      self->save([self, rp](const caf::error& err) mutable {
        if (err)
          rp.deliver(err);
        else
          rp.deliver(uint64_t{self->state().ops.size()});
      });
      return rp;
    },
    [self](ops_atom) { return self->state().ops; },
  };
}

/// The workload and the commands of one incarnation.
class member {
public:
  member(ferry::node& n, options opts) : node_(n), opts_(std::move(opts)) {
    // nop
  }

  ~member() {
    stop_workload(0ms);
    if (watcher_.joinable())
      watcher_.join();
  }

  void start() {
    if (opts_.dump)
      return;
    for (uint64_t w = 0; w < opts_.workers; ++w)
      workers_.emplace_back([this, w] { work(w); });
    watcher_ = std::thread{[this] { watch_self(); }};
  }

  /// Whether the member saw itself downed.
  bool downed() const { return downed_.load(); }

  std::string run(const std::string& line) {
    if (line == "up")
      return "up " + std::to_string(count_up());
    if (line == "quiet")
      return "quiet " + std::to_string(stop_workload(60s));
    if (line == "dump" && opts_.dump)
      return dump();
    return "fail unknown command: " + line;
  }

private:
  size_t count_up() const {
    size_t result = 0;
    for (auto& m : node_.cluster().members())
      result += m.status == ferry::member_status::up ? 1 : 0;
    return result;
  }

  /// Stops the workers, letting each resend its operation in flight for
  /// `grace` at most; returns the operations given up.
  uint64_t stop_workload(std::chrono::milliseconds grace) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (stopping_)
        return 0;
      stopping_ = true;
      give_up_at_ = std::chrono::steady_clock::now() + grace;
    }
    cv_.notify_all();
    for (auto& t : workers_)
      t.join();
    workers_.clear();
    return given_up_.load();
  }

  /// Sleeps `d` unless the workload stops first; returns whether it runs.
  bool pause(std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> guard{mtx_};
    cv_.wait_for(guard, d, [this] { return stopping_; });
    return !stopping_;
  }

  bool past_grace() {
    std::lock_guard<std::mutex> guard{mtx_};
    return stopping_ && std::chrono::steady_clock::now() >= give_up_at_;
  }

  void work(uint64_t w) {
    std::mt19937_64 rng{std::random_device{}()};
    auto& log = *here().log;
    uint64_t per_worker = opts_.keys / opts_.workers;
    do {
      auto key = "a" + std::to_string(w + opts_.workers * (rng() % per_worker));
      auto op = here().inc + "/" + std::to_string(++next_op_);
      auto ref = node_.entities().ref("chaos.account", key);
      if (!ref) {
        log.write("note no handle for " + key + ": " + one_line(ref.error()));
        continue;
      }
      log.write("eop " + op + " " + key);
      for (;;) {
        // One scoped actor per call: a blocking actor keeps every message
        // it does not wait for (chaos_node.cpp says why).
        caf::scoped_actor self{node_.system()};
        bool ok = false;
        self->request(*ref, 3s, apply_atom::value, op)
          .receive([&](uint64_t) { ok = true; },
                   [&](caf::error& err) {
                     log.write("eerr " + op + " " + one_line(err));
                   });
        if (ok) {
          log.write("eack " + op);
          break;
        }
        if (past_grace()) {
          ++given_up_;
          break;
        }
        std::this_thread::sleep_for(100ms);
      }
    } while (pause(std::chrono::milliseconds{opts_.tick_ms}));
  }

  /// Watches this member's own status: once it saw itself up, no entry at
  /// its address up (or joining, leaving, exiting) means it was downed, and
  /// maybe removed meanwhile (a member stopped past the others' patience
  /// hears both when it wakes).
  void watch_self() {
    bool seen_up = false;
    std::string last = "none";
    while (pause(100ms)) {
      bool up = false;
      std::string now = "none";
      for (auto& m : node_.cluster().members()) {
        if (m.address != address_of_self())
          continue;
        bool live = m.status != ferry::member_status::down &&
                    m.status != ferry::member_status::removed;
        up |= live;
        if (live || now == "none")
          now = ferry::to_string(m.status);
      }
      if (now != last) // for whoever reads the history after a failure
        here().log->write("note self " + (last = now));
      seen_up |= up;
      if (seen_up && !up) {
        here().log->write("note downed");
        downed_ = true;
        return;
      }
    }
  }

  std::string address_of_self() const {
    return opts_.hosts[opts_.index] + ":" + std::to_string(opts_.port);
  }

  /// Reads every account (32 at a time, each again on an error, 20 times at
  /// most) and writes `estate <key> <n> <ops...>`.
  std::string dump() {
    auto& log = *here().log;
    uint64_t unread = 0;
    std::deque<uint64_t> todo;
    for (uint64_t k = 0; k < opts_.keys; ++k)
      todo.push_back(k);
    std::vector<int> tries(opts_.keys, 0);
    caf::scoped_actor self{node_.system()};
    while (!todo.empty()) {
      std::vector<uint64_t> batch;
      while (!todo.empty() && batch.size() < 32) {
        batch.push_back(todo.front());
        todo.pop_front();
      }
      for (auto k : batch) {
        auto key = "a" + std::to_string(k);
        auto ref = node_.entities().ref("chaos.account", key);
        self->request(*ref, 10s, ops_atom::value)
          .receive(
            [&](std::vector<std::string>& ops) {
              std::string line = "estate " + key + " "
                                 + std::to_string(ops.size());
              for (auto& op : ops)
                line += " " + op;
              log.write(line);
            },
            [&](caf::error& err) {
              log.write("note " + key + " unread: " + one_line(err));
              if (++tries[k] < 20) {
                todo.push_back(k);
                std::this_thread::sleep_for(200ms);
              } else {
                ++unread;
              }
            });
      }
    }
    return "dumped " + std::to_string(opts_.keys) + " "
           + std::to_string(unread);
  }

  ferry::node& node_;
  options opts_;
  std::mutex mtx_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point give_up_at_;
  std::atomic<uint64_t> next_op_{0};
  std::atomic<uint64_t> given_up_{0};
  std::atomic<bool> downed_{false};
  std::vector<std::thread> workers_;
  std::thread watcher_;
};

/// Reads stdin on a thread of its own: lines go to `lines`, the end of
/// input sets `closed`.
struct input {
  std::mutex mtx;
  std::condition_variable cv;
  std::deque<std::string> lines;
  bool closed = false;

  void pump() {
    for (std::string line; std::getline(std::cin, line);) {
      std::lock_guard<std::mutex> guard{mtx};
      lines.push_back(line);
      cv.notify_all();
    }
    std::lock_guard<std::mutex> guard{mtx};
    closed = true;
    cv.notify_all();
  }
};

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  options opts;
  if (auto why = take_options(args, opts); !why.empty()) {
    std::cerr << "chaos_entities: " << why << '\n';
    return 2;
  }
  redirect_stderr(opts.stderr_file);
  ferry::node_config cfg;
  if (auto err = parse_config(cfg, argv[0], args)) {
    std::cerr << "chaos_entities: " << ferry::render(err) << '\n';
    return 2;
  }
  auto name = std::string{opts.dump ? "check" : "e"}
              + std::to_string(opts.index + 1);
  cfg.node_name = name;
  cfg.cluster.address = opts.hosts[opts.index] + ":"
                        + std::to_string(opts.port);
  cfg.add_message_type<std::vector<std::string>>("chaos.ops");
  cfg.add_entity_type<account>("chaos.account", account_behavior);
  here().inc = name + "-" + std::to_string(getpid());
  auto path = opts.history_dir + "/" + here().inc + ".ehistory";
  here().log = std::make_shared<history_log>(path);
  if (!here().log->ok()) {
    std::cerr << "chaos_entities: cannot write " << path << '\n';
    return 2;
  }
  here().log->write("start " + name + " " + here().inc);
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cout << "failed " << ferry::render(n.error()) << std::endl;
    return 1;
  }
  input in;
  std::thread reader{[&in] { in.pump(); }};
  reader.detach();
  {
    member program{**n, opts};
    program.start();
    std::cout << "started " << here().inc << std::endl;
    for (;;) {
      std::unique_lock<std::mutex> guard{in.mtx};
      in.cv.wait_for(guard, 100ms,
                     [&] { return in.closed || !in.lines.empty(); });
      if (!in.lines.empty()) {
        auto line = std::move(in.lines.front());
        in.lines.pop_front();
        guard.unlock();
        std::cout << program.run(line) << std::endl;
        continue;
      }
      if (in.closed || program.downed())
        break;
    }
  }
  // The node's end is its leave: its entities save and hand their shards
  // on (a downed member's were stopped already).
  n->reset();
  here().log->write("end");
  return 0;
}
