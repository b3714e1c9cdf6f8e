#include "load_runs.hpp"

#include "child.hpp"
#include "load_histogram.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <fstream>
#include <unistd.h>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ferry::bench {

namespace {

struct system_spec {
  std::string system;
  std::string family;
};

/// A step's figures from the clients' "done ..." lines.
load_step merge_step(double offered, double seconds,
                     const std::vector<std::string>& lines) {
  load_step step;
  step.offered = offered;
  latency_histogram all;
  for (auto& line : lines) {
    std::istringstream in{line};
    uint64_t sent = 0;
    uint64_t ok = 0;
    uint64_t errors = 0;
    if (!(in >> sent >> ok >> errors))
      throw std::runtime_error("a load client answered " + line);
    std::string rest;
    std::getline(in, rest);
    latency_histogram h;
    if (!h.decode(rest))
      throw std::runtime_error("a load client's histogram does not read: "
                               + rest);
    all.merge(h);
    step.sent += sent;
    step.ok += ok;
    step.errors += errors;
  }
  step.achieved = static_cast<double>(step.ok) / seconds;
  step.p50_us = all.quantile(0.5);
  step.p99_us = all.quantile(0.99);
  step.p999_us = all.quantile(0.999);
  step.max_us = all.max_us();
  return step;
}

/// CPU seconds (user and system) `pid` used so far; negative when unknown.
double cpu_seconds(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  auto paren = text.rfind(')');
  if (paren == std::string::npos)
    return -1;
  std::istringstream rest{text.substr(paren + 2)};
  std::string field;
  double utime = 0;
  double stime = 0;
  // Fields 3 to 13 (state ... cmajflt), then utime and stime.
  for (int i = 3; i <= 13 && rest >> field; ++i) {
  }
  if (!(rest >> utime >> stime))
    return -1;
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

bool held(const load_step& s) {
  return s.errors == 0 && s.sent > 0
         && static_cast<double>(s.ok) >= 0.95 * static_cast<double>(s.sent)
         && s.p99_us <= load_p99_bound_us;
}

load_set run_set(const std::string& tr, const system_spec& spec,
                 const bench_env& env, const load_options& opts) {
  load_set set;
  set.transport = tr;
  set.system = spec.system;
  set.family = spec.family;
  set.clients = opts.clients;
  bool ferry = spec.system == "ferry";
  bool socket = spec.system == "socket";
  bool ipc = tr == "ipc";
  std::vector<std::string> server_args;
  if (socket) {
    server_args = {"--peer=socket-load", "--address=127.0.0.1"};
  } else if (ferry) {
    auto list = "[\"" + spec.family + "\"]";
    server_args = {"--peer=ferry", "--address=127.0.0.1",
                   "--ferry.node-name=load-server",
                   "--ferry.store.name="
                     + (ipc ? env.store_name : env.tcp_store_name),
                   "--ferry.store.capacity="
                     + std::to_string(ipc ? env.store_capacity
                                          : env.tcp_store_capacity),
                   "--ferry.link.serializers=" + list,
                   "--ferry.link.deserializers=" + list};
  } else {
    server_args = {"--peer=caf-tuned", "--address=127.0.0.1"};
  }
  try {
    child server{server_args};
    auto port = server.wait_for("port ", std::chrono::seconds{60});
    if (!port)
      throw std::runtime_error("the load server did not start");
    std::vector<std::unique_ptr<child>> clients;
    for (int k = 0; k < opts.clients; ++k) {
      std::vector<std::string> args{
        socket  ? "--load-client=socket"
        : ferry ? "--load-client=ferry"
                : "--load-client=caf-tuned",
        "--host=127.0.0.1", "--port=" + *port};
      if (ferry) {
        auto list = "[\"" + spec.family + "\"]";
        args.insert(args.end(),
                    {"--ferry.node-name=load-client-" + std::to_string(k),
                     // Over tcp the clients share the driver's store, which
                     // is not the server's: ferry sees another host.
                     "--ferry.store.name=" + env.store_name,
                     "--ferry.store.capacity="
                       + std::to_string(env.store_capacity),
                     "--ferry.link.serializers=" + list,
                     "--ferry.link.deserializers=" + list});
      }
      clients.push_back(std::make_unique<child>(args));
      if (!clients.back()->wait_for("ready", std::chrono::seconds{60}))
        throw std::runtime_error("load client " + std::to_string(k)
                                 + " did not connect");
    }
    auto millis = static_cast<uint64_t>(opts.step_seconds * 1e3);
    auto run_step = [&](double rate) {
      std::cerr << "ferry-bench: load " << tr << " " << spec.system
                << (spec.family.empty() ? "" : " " + spec.family) << " "
                << rate << "/s" << std::endl;
      auto share = rate / static_cast<double>(opts.clients);
      auto cpu_before = cpu_seconds(server.pid());
      for (auto& c : clients)
        c->write_line("step " + std::to_string(share) + " "
                      + std::to_string(millis));
      std::vector<std::string> lines;
      for (auto& c : clients) {
        auto line = c->wait_for(
          "done ", std::chrono::milliseconds{millis + 30'000});
        if (!line)
          throw std::runtime_error("a load client did not finish a step");
        lines.push_back(*line);
      }
      auto cpu_after = cpu_seconds(server.pid());
      auto step = merge_step(rate, opts.step_seconds, lines);
      if (cpu_before >= 0 && cpu_after >= cpu_before && step.ok > 0)
        step.server_cpu_us = (cpu_after - cpu_before) * 1e6
                             / static_cast<double>(step.ok);
      set.steps.push_back(step);
      if (held(step))
        set.held_rate = std::max(set.held_rate, rate);
      return step;
    };
    for (auto rate : opts.rates) {
      auto step = run_step(rate);
      // Far past the limit: the next steps only queue more.
      if (step.p99_us > 10 * load_p99_bound_us
          || step.errors * 10 > step.sent)
        break;
    }
    // Near the limit, 10 % apart: from the highest rate held up to the
    // first given rate above it that was not held (a ladder held to its
    // top says only that the limit lies above it).
    double failed_at = 0;
    for (auto& s : set.steps)
      if (!held(s) && s.offered > set.held_rate
          && (failed_at == 0 || s.offered < failed_at))
        failed_at = s.offered;
    if (set.held_rate > 0 && failed_at > 0)
      for (auto rate = set.held_rate * 1.1; rate < failed_at * 0.999;
           rate *= 1.1)
        if (!held(run_step(rate)))
          break;
    std::sort(set.steps.begin(), set.steps.end(),
              [](const load_step& a, const load_step& b) {
                return a.offered < b.offered;
              });
  } catch (std::exception& e) {
    set.error = e.what();
  }
  return set;
}

} // namespace

std::vector<double> default_load_rates(bool quick) {
  if (quick)
    return {1'000,  5'000,   10'000,  20'000, 40'000,
            60'000, 80'000, 120'000, 160'000, 200'000};
  return {1'000,  2'000,  5'000,   10'000,  15'000,  20'000,  30'000,  40'000,
          50'000, 60'000, 80'000, 100'000, 120'000, 160'000, 200'000};
}

std::vector<load_set> measure_load(const bench_env& env,
                                   const load_options& opts) {
  std::vector<load_set> sets;
  // The machine's limit, one set: plain sockets over loopback.
  sets.push_back(run_set("tcp", system_spec{"socket", ""}, env, opts));
  for (const char* tr : {"tcp", "ipc"})
    for (auto& spec : {system_spec{"ferry", "caf"},
                       system_spec{"ferry", "cereal.binary"},
                       system_spec{"raw-caf-tuned", ""}})
      sets.push_back(run_set(tr, spec, env, opts));
  return sets;
}

} // namespace ferry::bench
