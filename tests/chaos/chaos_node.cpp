// One node of the chaos run (chaos_test.cpp): a ferry node with its own
// store that runs the workload against its peers and writes every event to
// its history (history.hpp says what each line means).
//
// Nodes are n1..n5, one per host. Node i dials every node j > i (at
// host j's address and --chaos-port, or at the port --chaos-dial names for
// j: the delaying relay) and sends it a `chaos_hello` that begins a link
// epoch; node j learns node i's front actor from the hello. When the link
// goes down (`node_down`), node i dials again and begins a new epoch. On
// each link, in both directions, a workload thread sends a numbered one-way
// note and a request per tick: a call with a 32 B or 4 KiB body, or every
// eighth tick a call relayed through the peer to a third node's front,
// whose handle travels in the request. An object thread sends a 64 MiB
// store object every --chaos-object-ms, alternately to a peer and to the
// node's own object worker. Every link epoch is watched by one monitoring
// and one linked actor.
//
// Flags: --chaos-index=<0..4> --chaos-hosts=<a1,...,a5> --chaos-port=<p>
// --chaos-dial=<j>:<port> --chaos-history=<dir> --chaos-stderr=<file>
// --chaos-tick-ms=<ms> --chaos-object-ms=<ms>; the rest are ferry's and
// CAF's. It prints "started <inc>" once its node runs, then answers each
// line of stdin with one line:
//   links          "links <n>": peers with a link in use
//   warm           "rss <KiB>": writes `rss warm`
//   fill <ms>      "filling": fills the store to its bound for <ms>
//   quiet          "quiet": stops the workload, once every thread is done
//   drain <ms>     "store <objects>": waits up to <ms> for the store to
//                  empty; writes `store` and `rss end`
//   close          "closed": link events are no longer written
// It writes `end` and exits 0 when stdin closes.
#include "chaos_actors.hpp"
#include "process_flags.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/store/object_store.hpp"

#include <caf/all.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

namespace {

using namespace std::chrono_literals;
using namespace ferry::chaos;

/// The chaos flags: the common ones and the node's own.
struct options : process_flags {
  options() { port = 7400; }

  std::map<size_t, uint16_t> dial;
  int tick_ms = 10;
  int object_ms = 8000;
};

std::string name_of(size_t i) {
  return "n" + std::to_string(i + 1);
}

/// Takes the --chaos-* flags out of `args`; returns what is wrong with them.
std::string take_options(std::vector<std::string>& args, options& opts) {
  return take_flags(args, opts, [&](const std::string& key,
                                    const std::string& value) {
    if (key == "dial") {
      auto colon = value.find(':');
      opts.dial[std::stoul(value.substr(0, colon))]
        = static_cast<uint16_t>(std::stoul(value.substr(colon + 1)));
    } else if (key == "tick-ms") {
      opts.tick_ms = std::stoi(value);
    } else if (key == "object-ms") {
      opts.object_ms = std::stoi(value);
    } else {
      return false;
    }
    return true;
  });
}

/// Returns this process's resident memory without shared memory (the
/// store's pages), in KiB.
uint64_t private_rss_kib() {
  std::ifstream in{"/proc/self/status"};
  uint64_t rss = 0;
  uint64_t shmem = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words{line};
    std::string key;
    uint64_t value = 0;
    words >> key >> value;
    if (key == "VmRSS:")
      rss = value;
    else if (key == "RssShmem:")
      shmem = value;
  }
  return rss - std::min(rss, shmem);
}

/// The node, its actors and its threads.
class chaos_node {
public:
  chaos_node(ferry::node& n, options opts, std::shared_ptr<history_log> log)
    : node_(n), opts_(std::move(opts)) {
    ctx_.name = name_of(opts_.index);
    ctx_.inc = ctx_.name + "-" + std::to_string(getpid());
    ctx_.log = std::move(log);
    std::vector<std::string> names;
    for (size_t j = 0; j < opts_.hosts.size(); ++j)
      if (j != opts_.index)
        names.push_back(name_of(j));
    ctx_.peers = std::make_shared<peer_table>(names);
    auto& sys = node_.system();
    ctx_.keeper = sys.spawn(keeper);
    worker_ = sys.spawn(object_worker);
    front_ = sys.spawn(front, ctx_, worker_);
    node_.watch_nodes(front_);
  }

  ~chaos_node() {
    quiet();
    node_.unwatch_nodes(front_);
    for (auto& whom : {ctx_.keeper, worker_, front_})
      caf::anon_send_exit(whom, caf::exit_reason::user_shutdown);
  }

  const std::string& inc() const {
    return ctx_.inc;
  }

  /// Publishes the front actor and starts the threads.
  std::string start() {
    ctx_.log->write("start " + ctx_.name + " " + ctx_.inc);
    auto port = node_.publish(front_, opts_.port, "0.0.0.0");
    if (!port)
      return ferry::render(port.error());
    for (size_t j = 0; j < opts_.hosts.size(); ++j) {
      if (j == opts_.index)
        continue;
      if (j > opts_.index)
        threads_.emplace_back([this, j] { dial(j); });
      threads_.emplace_back([this, j] { work(name_of(j)); });
    }
    threads_.emplace_back([this] { send_objects(); });
    return {};
  }

  /// Carries out one command line; returns the line to print.
  std::string run(const std::string& line) {
    std::istringstream in{line};
    std::string command;
    in >> command;
    if (command == "links")
      return "links " + std::to_string(ctx_.peers->live_count());
    if (command == "warm") {
      auto kib = private_rss_kib();
      ctx_.log->write("rss warm " + std::to_string(kib));
      return "rss " + std::to_string(kib);
    }
    if (command == "fill") {
      int64_t ms = 0;
      in >> ms;
      if (filler_.joinable())
        filler_.join();
      filler_ = std::thread{[this, ms] { fill(std::chrono::milliseconds{ms}); }};
      return "filling";
    }
    if (command == "quiet") {
      quiet();
      return "quiet";
    }
    if (command == "drain") {
      int64_t ms = 0;
      in >> ms;
      return drain(std::chrono::milliseconds{ms});
    }
    if (command == "close") {
      ctx_.closing->store(true);
      return "closed";
    }
    return "fail unknown command: " + line;
  }

private:
  bool stopping() const {
    return stop_.load();
  }

  /// Sleeps `d` unless the node stops first.
  void pause(std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> guard{stop_mtx_};
    stop_cv_.wait_for(guard, d, [this] { return stopping(); });
  }

  void quiet() {
    {
      std::lock_guard<std::mutex> guard{stop_mtx_};
      stop_ = true;
    }
    stop_cv_.notify_all();
    for (auto& t : threads_)
      t.join();
    threads_.clear();
    if (filler_.joinable())
      filler_.join();
  }

  /// Sends a request and writes it and its one outcome to the history.
  /// Each request has a scoped actor of its own: a blocking actor keeps
  /// every message it is not waiting for, and the timeout CAF schedules for
  /// a request arrives even after its answer, so one actor asking many times
  /// would hold a stale timeout message per request.
  template <class... Ts>
  void ask(const std::string& kind, const std::string& peer,
           const std::string& epoch, const caf::actor& whom,
           std::chrono::milliseconds timeout, uint64_t id, uint64_t want,
           Ts&&... xs) {
    ctx_.log->write("req " + std::to_string(id) + " " + kind + " " + peer
                    + " " + epoch + " " + std::to_string(timeout.count())
                    + " " + std::to_string(want));
    caf::scoped_actor self{node_.system()};
    self->request(whom, timeout, std::forward<Ts>(xs)...)
      .receive(
        [&](uint64_t got) {
          ctx_.log->write("ans " + std::to_string(id) + " ok "
                          + std::to_string(got));
        },
        [&](caf::error& err) {
          ctx_.log->write("ans " + std::to_string(id) + " err "
                          + one_line(err));
        });
  }

  /// Dials node `j` whenever no link to it is in use.
  void dial(size_t j) {
    auto peer = name_of(j);
    auto port = opts_.dial.count(j) ? opts_.dial[j] : opts_.port;
    uint64_t epochs = 0;
    caf::scoped_actor self{node_.system()};
    while (!stopping()) {
      if (ctx_.peers->live(peer)) {
        ctx_.peers->wait_down(peer, 200ms);
        continue;
      }
      auto downs = ctx_.peers->downs(peer);
      auto proxy = node_.remote_actor(opts_.hosts[j], port);
      if (!proxy) {
        pause(300ms);
        continue;
      }
      auto epoch = ctx_.inc + "." + peer + "." + std::to_string(++epochs);
      bool welcome = false;
      self->request(*proxy, 5s, chaos_hello{ctx_.name, ctx_.inc, epoch},
                    front_)
        .receive([&](const std::string& x) { welcome = x == "welcome"; },
                 [&](caf::error& err) {
                   ctx_.log->write("note hello to " + peer + " failed: "
                                   + one_line(err));
                 });
      if (!welcome) {
        pause(300ms);
        continue;
      }
      ctx_.log->write("link " + peer + " " + epoch);
      spawn_watchers(node_.system(), ctx_, *proxy, epoch);
      if (ctx_.peers->downs(peer) == downs)
        ctx_.peers->up(peer, *proxy, epoch);
    }
  }

  /// The workload towards `peer`: a note and a request per tick.
  void work(const std::string& peer) {
    caf::scoped_actor self{node_.system()};
    std::string epoch;
    uint64_t seq = 0;
    uint64_t tick = 0;
    const std::string small(32, 's');
    const std::string large(4096, 'L');
    while (!stopping()) {
      auto link = ctx_.peers->live(peer);
      if (!link) {
        pause(50ms);
        continue;
      }
      if (link->epoch != epoch) {
        epoch = link->epoch;
        seq = 0;
      }
      ++seq;
      ++tick;
      auto body = "note " + std::to_string(seq) + " " + ctx_.inc;
      ctx_.log->write("send " + peer + " " + epoch + " " + std::to_string(seq));
      self->send(link->proxy, chaos_note{ctx_.inc, epoch, seq,
                                         checksum(body), body});
      auto id = next_id_++;
      auto call_body = (tick % 2 == 0 ? large : small) + std::to_string(id);
      chaos_call call{ctx_.inc, id, call_body};
      auto via = tick % 8 == 0 ? ctx_.peers->other(peer, tick) : std::nullopt;
      if (via)
        ask("relay", peer, link->epoch, link->proxy, 10s, id,
            checksum(call_body), via->proxy, call);
      else
        ask("call", peer, link->epoch, link->proxy, 5s, id,
            checksum(call_body), call);
      pause(std::chrono::milliseconds{opts_.tick_ms});
    }
  }

  /// Sends a 64 MiB object every --chaos-object-ms, alternately to a peer
  /// and to the object worker.
  void send_objects() {
    constexpr uint64_t words = (64u << 20) / sizeof(uint64_t);
    uint64_t k = 0;
    for (pause(std::chrono::milliseconds{opts_.object_ms}); !stopping();
         pause(std::chrono::milliseconds{opts_.object_ms})) {
      ++k;
      auto link = k % 2 == 0 ? ctx_.peers->other("", k) : std::nullopt;
      if (k % 2 == 0 && !link)
        continue;
      auto builder = node_.store()->create(words * sizeof(uint64_t));
      if (!builder) {
        ctx_.log->write("note no object: " + one_line(builder.error()));
        continue;
      }
      auto* xs = reinterpret_cast<uint64_t*>(builder->bytes().data());
      auto seed = (static_cast<uint64_t>(getpid()) << 20) + k;
      for (uint64_t i = 0; i < words; ++i)
        xs[i] = object_element(seed, i);
      auto want = object_checksum({xs, words});
      auto ref = builder->seal();
      if (!ref) {
        ctx_.log->write("note no object: " + one_line(ref.error()));
        continue;
      }
      auto arr = u64_array::from_ref(std::move(*ref));
      if (!arr) {
        ctx_.log->write("note no object: " + one_line(arr.error()));
        continue;
      }
      auto id = next_id_++;
      if (link)
        ask("object", link->peer, link->epoch, link->proxy, 30s, id, want,
            std::move(*arr));
      else
        ask("local-object", "-", "-", worker_, 30s, id, want,
            std::move(*arr));
    }
  }

  /// Fills the store to its bound with 16 MiB objects for `hold`.
  void fill(std::chrono::milliseconds hold) {
    std::vector<ferry::store::object_ref> held;
    uint64_t bytes = 0;
    caf::error why;
    for (;;) {
      auto builder = node_.store()->create(16u << 20);
      if (!builder) {
        why = builder.error();
        break;
      }
      auto ref = builder->seal();
      if (!ref) {
        why = ref.error();
        break;
      }
      held.push_back(std::move(*ref));
      bytes += 16u << 20;
    }
    ctx_.log->write("fill " + std::to_string(bytes));
    ctx_.log->write("note the store refused more: " + one_line(why));
    pause(hold);
    held.clear();
    ctx_.log->write("unfill");
  }

  std::string drain(std::chrono::milliseconds timeout) {
    auto until = std::chrono::steady_clock::now() + timeout;
    size_t objects = 0;
    for (;;) {
      auto summary = node_.store()->memory_summary();
      if (!summary)
        return "fail " + ferry::render(summary.error());
      objects = summary->objects.size();
      if (objects == 0 || std::chrono::steady_clock::now() > until)
        break;
      std::this_thread::sleep_for(100ms);
    }
    ctx_.log->write("store " + std::to_string(objects));
    ctx_.log->write("rss end " + std::to_string(private_rss_kib()));
    return "store " + std::to_string(objects);
  }

  ferry::node& node_;
  options opts_;
  node_context ctx_;
  caf::actor worker_;
  caf::actor front_;
  std::atomic<uint64_t> next_id_{1};
  std::mutex stop_mtx_;
  std::condition_variable stop_cv_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::thread filler_;
};

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  options opts;
  if (auto why = take_options(args, opts); !why.empty()) {
    std::cerr << "chaos_node: " << why << '\n';
    return 2;
  }
  redirect_stderr(opts.stderr_file);
  ferry::node_config cfg;
  register_chaos_types(cfg);
  if (auto err = parse_config(cfg, argv[0], args)) {
    std::cerr << "chaos_node: " << ferry::render(err) << '\n';
    return 2;
  }
  cfg.node_name = name_of(opts.index);
  auto path = opts.history_dir + "/" + name_of(opts.index) + "-"
              + std::to_string(getpid()) + ".history";
  auto log = std::make_shared<history_log>(path);
  if (!log->ok()) {
    std::cerr << "chaos_node: cannot write " << path << '\n';
    return 2;
  }
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cout << "failed " << ferry::render(n.error()) << std::endl;
    return 1;
  }
  {
    chaos_node program{**n, opts, log};
    if (auto why = program.start(); !why.empty()) {
      std::cout << "failed " << why << std::endl;
      return 1;
    }
    std::cout << "started " << program.inc() << std::endl;
    std::string line;
    while (std::getline(std::cin, line))
      std::cout << program.run(line) << std::endl;
  }
  n->reset();
  log->write("end");
  return 0;
}
