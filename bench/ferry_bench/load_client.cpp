// The load program's client process: ferry-bench started again with
// `--load-client=ferry|caf-tuned|socket --host=<h> --port=<p> [options]`,
// the options being ferry's (a ferry client: its store and families) or
// CAF's; a socket client is load_socket.cpp's.
//
// It connects to the sink of a peer process (`--peer=ferry|caf-tuned`),
// prints "ready", then runs one command per line of stdin until it closes:
//   step <rate> <millis>   requests the sink with a 64 B byte array `rate`
//                          times a second for `millis` ms, each at its
//                          scheduled time (open loop, as wrk2: a request
//                          whose time has come goes out even while others
//                          wait, so a slow server cannot slow the offered
//                          rate), waits up to 10 s for the answers and
//                          prints "done <sent> <ok> <errors> <histogram>":
//                          each answer's latency counted from its scheduled
//                          time (load_histogram.hpp).
// One sending thread keeps the schedule; an actor of the client's system
// sends the requests and records their answers.
#include "bench_types.hpp"
#include "driver.hpp"
#include "ferry_parts.hpp"
#include "load_histogram.hpp"
#include "load_runs.hpp"
#include "load_socket.hpp"

#include "support/caf_connect.hpp"
#include "support/ferry_caf_settings.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

namespace ferry::bench {

namespace {

using tick_atom = caf::atom_constant<caf::atom("ldtick")>;
using tally_atom = caf::atom_constant<caf::atom("ldtally")>;

struct tally {
  uint64_t sent = 0;
  uint64_t ok = 0;
  uint64_t errors = 0;
  latency_histogram latencies;
};

struct requester_state {
  tally current;
};

/// Sends a request per tick to `server` and records its answer's latency
/// from the tick's scheduled time; `tally` hands over the step's figures
/// and starts the next.
caf::behavior requester(caf::stateful_actor<requester_state>* self,
                        caf::actor server, caf::message payload) {
  return {
    [=](tick_atom, uint64_t scheduled_ns) {
      ++self->state.current.sent;
      self->request(server, std::chrono::seconds{10}, payload)
        .then(
          [=](uint64_t) {
            ++self->state.current.ok;
            self->state.current.latencies.add(
              static_cast<double>(now_ns() - scheduled_ns) / 1e3);
          },
          [=](caf::error&) { ++self->state.current.errors; });
    },
    [=](tally_atom) {
      auto& t = self->state.current;
      std::ostringstream out;
      out << t.sent << ' ' << t.ok << ' ' << t.errors << ' '
          << t.latencies.encode();
      bool answered = t.ok + t.errors == t.sent;
      return std::make_tuple(answered, out.str());
    },
    [=](tally_atom, bool) { self->state.current = tally{}; },
  };
}

/// Runs one step: `rate` requests a second for `millis` ms.
std::string run_step(caf::actor_system& sys, const caf::actor& req,
                     double rate, uint64_t millis) {
  caf::anon_send(req, tally_atom::value, true); // a fresh tally
  auto count = static_cast<uint64_t>(rate * static_cast<double>(millis) / 1e3);
  auto interval_ns = 1e9 / rate;
  auto start = now_ns() + 1'000'000;
  uint64_t next = 0;
  while (next < count) {
    auto now = now_ns();
    // Every request whose time has come goes out now.
    while (next < count
           && start + static_cast<uint64_t>(static_cast<double>(next)
                                            * interval_ns)
                <= now) {
      caf::anon_send(req, tick_atom::value,
                     start
                       + static_cast<uint64_t>(static_cast<double>(next)
                                               * interval_ns));
      ++next;
    }
    if (next < count) {
      auto due = start
                 + static_cast<uint64_t>(static_cast<double>(next)
                                         * interval_ns);
      if (due > now + 50'000)
        std::this_thread::sleep_for(std::chrono::nanoseconds(due - now
                                                             - 50'000));
      else
        std::this_thread::yield();
    }
  }
  // The answers, for at most the requests' own timeout.
  caf::scoped_actor self{sys};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{11};
  for (;;) {
    bool answered = false;
    std::string figures;
    self->request(req, std::chrono::seconds{10}, tally_atom::value)
      .receive(
        [&](bool done, const std::string& text) {
          answered = done;
          figures = text;
        },
        [&](caf::error& err) { figures = "error " + caf::to_string(err); });
    if (answered || std::chrono::steady_clock::now() >= deadline)
      return figures;
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
}

int serve_steps(caf::actor_system& sys, const caf::actor& req) {
  serve_step_commands([&](double rate, uint64_t millis) {
    return run_step(sys, req, rate, millis);
  });
  caf::anon_send_exit(req, caf::exit_reason::user_shutdown);
  return 0;
}

} // namespace

void serve_step_commands(
  const std::function<std::string(double, uint64_t)>& step) {
  std::cout << "ready" << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words{line};
    std::string verb;
    double rate = 0;
    uint64_t millis = 0;
    if (!(words >> verb >> rate >> millis) || verb != "step" || rate <= 0) {
      std::cout << "error expected step <rate> <millis>, got " << line
                << std::endl;
      continue;
    }
    std::cout << "done " << step(rate, millis) << std::endl;
  }
}

int load_client_main(int argc, char** argv) {
  std::string mode = argv[1] + std::strlen("--load-client=");
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  int i = 2;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--host=", 0) == 0)
      host = arg.substr(7);
    else if (arg.rfind("--port=", 0) == 0)
      port = static_cast<uint16_t>(std::stoul(arg.substr(7)));
    else
      break;
  }
  std::vector<char*> rest{argv[0]};
  for (; i < argc; ++i)
    rest.push_back(argv[i]);
  auto n = static_cast<int>(rest.size());
  rest.push_back(nullptr);
  if (mode == "ferry") {
    ferry::node_config cfg;
    register_ferry_types(cfg);
    if (auto err = cfg.parse(n, rest.data())) {
      std::cerr << "ferry-bench load client: " << ferry::render(err) << '\n';
      return 2;
    }
    auto node = ferry::node::start(cfg);
    if (!node) {
      std::cerr << "ferry-bench load client: " << ferry::render(node.error())
                << '\n';
      return 2;
    }
    auto server = (*node)->remote_actor(host, port);
    if (!server) {
      std::cerr << "ferry-bench load client: "
                << ferry::render(server.error()) << '\n';
      return 1;
    }
    auto& sys = (*node)->system();
    auto req = sys.spawn(requester, *server, bytes_message(64, false));
    return serve_steps(sys, req);
  }
  if (mode == "caf-tuned") {
    caf::actor_system_config cfg;
    register_caf_types(cfg);
    apply_ferry_caf_settings(cfg);
    if (auto err = cfg.parse(n, rest.data())) {
      std::cerr << "ferry-bench load client: " << caf::to_string(err) << '\n';
      return 2;
    }
    caf::actor_system sys{cfg};
    auto server = connect_caf(sys, host, port);
    if (!server) {
      std::cerr << "ferry-bench load client: " << sys.render(server.error())
                << '\n';
      return 1;
    }
    auto req = sys.spawn(requester, *server, bytes_message(64, true));
    return serve_steps(sys, req);
  }
  if (mode == "socket")
    return socket_load_client_main(host, port);
  std::cerr << "ferry-bench: unknown load client mode " << mode << '\n';
  return 2;
}

} // namespace ferry::bench
