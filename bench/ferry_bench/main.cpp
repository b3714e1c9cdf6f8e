// ferry-bench: message throughput and latency, ferry against plain CAF in the
// same run. See README.md in this folder.
//
// The driver runs the cells per transport, and per (size, pattern) as one
// *set*: the raw-caf baseline and the ferry rows compared with it. The cells
// of a set warm up, then take turns round by round (baseline, ferry rows,
// baseline, ...; the ferry rows rotate), and each reports its median round:
// a slow phase of the machine hits every cell of the set alike, and
// baseline and ferry rows get the same number of rounds. Groups (a sender side and a receiver side, see
// runs.hpp) stay alive while their transport runs, so every family's peer is
// started once. Hand-off and broadcast rows are measured at once, each on
// its own, after the sets of their transport; a broadcast row brings its
// own four nodes (broadcast_runs.hpp) and stops the groups first. netns sets
// run on two emulated hosts (emulated_hosts.hpp), this thread on the first
// while their groups live.
//
// inproc rows send to a new sink every round. Two sinks running the same
// code in one process take different rates for their whole life (64 B
// oneway: 5.0-5.5 M msg/s against 5.9-6.5 M, the same sink within 5 % round
// after round), so with one sink per row the inproc ratio, plain CAF against
// plain CAF, is a draw between two instances (0.81-1.24 across runs). A sink
// per round puts that spread inside each row, where the median takes it out.
#include "broadcast_runs.hpp"
#include "emulated_hosts.hpp"
#include "machine.hpp"
#include "matrix.hpp"
#include "output.hpp"
#include "load_runs.hpp"
#include "python_runs.hpp"
#include "runs.hpp"

#include "ferry/serializers/vector_pool.hpp"
#include "ferry/store/object_store.hpp"
#include "ferry/store/store_config.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include <unistd.h>

using namespace ferry::bench;

namespace {

constexpr uint64_t MiB = uint64_t{1} << 20;

std::string progress_figure(const result& r) {
  if (!r.ok)
    return "FAILED: " + r.error;
  char buf[160];
  if (r.c.pat == pattern::handoff)
    std::snprintf(buf, sizeof(buf),
                  "p50 %.0f us (64 B: %.0f us), resent %.0f us (64 B: %.0f "
                  "us); memcpy %.0f us",
                  r.p50_us, r.small_p50_us, r.resend_p50_us,
                  r.small_resend_p50_us, r.memcpy_us);
  else if (r.c.pat == pattern::broadcast)
    std::snprintf(buf, sizeof(buf),
                  "p50 %.0f us to %d nodes, %.0f us to one (%.2fx); owner "
                  "copies %.2f",
                  r.p50_us, broadcast_receivers, r.single_p50_us,
                  r.broadcast_ratio, r.owner_copies);
  else
    std::snprintf(buf, sizeof(buf), "%.*f msg/s, %.1f MB/s, p50 %.1f us",
                  r.msgs_per_s < 100 ? 2 : 0, r.msgs_per_s, r.mb_per_s,
                  r.p50_us);
  return buf;
}

/// Removes stores of earlier ferry-bench runs whose process is gone (killed
/// before it could remove its store).
void remove_stale_stores() {
  std::error_code ec;
  for (auto& entry : std::filesystem::directory_iterator{"/dev/shm", ec}) {
    auto name = entry.path().filename().string();
    if (name.rfind("ferry-bench-", 0) != 0)
      continue;
    auto pid = std::atol(name.c_str() + std::strlen("ferry-bench-"));
    if (pid <= 0 || (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
      auto store = name.substr(0, name.find_first_not_of(
                                    "0123456789", std::strlen("ferry-bench-")));
      for (auto suffix : {"", "-tcp-peer"})
        static_cast<void>(ferry::store::object_store::remove(store + suffix));
      for (int i = 1; i <= broadcast_receivers; ++i)
        static_cast<void>(ferry::store::object_store::remove(
          broadcast_store_name(store + "-tcp-peer", i)));
    }
  }
}

/// Copies a measurement into its result row.
void fill(result& r, const measurement& m) {
  r.ok = m.ok;
  r.error = m.error;
  r.messages = m.messages;
  r.seconds = m.seconds;
  r.msgs_per_s = m.msgs_per_s;
  r.mb_per_s = m.msgs_per_s * static_cast<double>(r.c.size) / 1e6;
  r.p50_us = m.p50_us;
  r.p99_us = m.p99_us;
  r.receiver_peak_rss_mb = m.rss_mb;
  r.round_msgs_per_s = m.round_rates;
  r.resend_p50_us = m.resend_p50_us;
  r.small_p50_us = m.small_p50_us;
  r.small_resend_p50_us = m.small_resend_p50_us;
  r.single_p50_us = m.single_p50_us;
  r.broadcast_ratio
    = m.single_p50_us > 0 ? m.p50_us / m.single_p50_us : -1;
  r.owner_copies = m.owner_copies;
  r.relayed_bytes = m.relayed_bytes;
  r.cpu_ratio = m.cpu_ratio;
  r.cores_busy = m.cores_busy;
}

/// Returns whether `x` and `y` are compared with the same baseline.
bool same_set(const cell& x, const cell& y) {
  return set_transport(x.tr) == set_transport(y.tr) && x.size == y.size
         && x.pat == y.pat && !is_one_shot(x.pat);
}

/// A report of this run, its machine and command filled in.
report start_report(const options& opts, int argc, char** argv) {
  report rep;
  rep.mode = opts.quick ? "quick" : "full";
  rep.machine = read_machine();
  rep.command = command_line(argc, argv);
  return rep;
}

/// Prints `rep` and writes its JSON (and, for the load program, its plot);
/// returns the exit code.
int finish_report(report& rep, const options& opts,
                  std::chrono::steady_clock::time_point started) {
  rep.wall_seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - started)
                       .count();
  print_table(rep);
  bool ok = true;
  if (!opts.json.empty())
    ok = write_json(rep, opts.json) && ok;
  if (!opts.plot.empty() && !rep.load.empty())
    ok = write_load_plot(rep, opts.plot) && ok;
  return ok ? 0 : 1;
}

/// `--load`: the load program alone (load_runs.hpp), with stores of its own
/// (64 B requests never reach them; a ferry node attaches one all the same).
int run_load(const options& opts, int argc, char** argv,
             std::chrono::steady_clock::time_point started) {
  auto rep = start_report(opts, argc, argv);
  bench_env env;
  env.store_name = "ferry-bench-" + std::to_string(getpid());
  env.store_capacity = 64 * MiB;
  env.tcp_store_name = env.store_name + "-tcp-peer";
  env.tcp_store_capacity = 64 * MiB;
  load_options lo;
  lo.clients = opts.load_clients;
  lo.rates = opts.load_rates.empty() ? default_load_rates(opts.quick)
                                     : opts.load_rates;
  lo.step_seconds = opts.load_step_seconds > 0 ? opts.load_step_seconds
                    : opts.quick               ? 1.0
                                               : 3.0;
  rep.load = measure_load(env, lo);
  static_cast<void>(ferry::store::object_store::remove(env.store_name));
  static_cast<void>(ferry::store::object_store::remove(env.tcp_store_name));
  return finish_report(rep, opts, started);
}

/// `--entities`: the entity program alone (entity_runs.hpp).
int run_entities(const options& opts, int argc, char** argv,
                 std::chrono::steady_clock::time_point started) {
  auto rep = start_report(opts, argc, argv);
  entity_options eo;
  eo.keys = opts.entity_keys;
  rep.entities = measure_entities(eo);
  return finish_report(rep, opts, started);
}

} // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strncmp(argv[1], "--peer=", 7) == 0)
    return peer_main(argc, argv);
  if (argc > 1 && std::strncmp(argv[1], "--load-client=", 14) == 0)
    return load_client_main(argc, argv);
  int exit_code = 0;
  auto opts = parse_options(argc, argv, exit_code);
  if (!opts)
    return exit_code;
  auto started = std::chrono::steady_clock::now();
  remove_stale_stores();
  if (opts->load)
    return run_load(*opts, argc, argv, started);
  if (opts->entities)
    return run_entities(*opts, argc, argv, started);
  auto mtx = build_matrix(*opts);
  if (opts->list) {
    for (auto& c : mtx.cells)
      std::cout << c.label() << "\n";
    for (auto& s : mtx.skipped)
      std::cout << "skip " << s.c.label() << ": " << s.reason << "\n";
    if (python_selected(*opts))
      std::cout << "python: python-ferry and python-socket round trips, "
                   "tcp, 64 B\n";
    return 0;
  }
  if (mtx.cells.empty() && !python_selected(*opts)) {
    std::cerr << "ferry-bench: the filters select no cell\n";
    for (auto& s : mtx.skipped)
      std::cerr << "  skipped " << s.c.label() << ": " << s.reason << "\n";
    return 2;
  }
  // netns rows make network namespaces: the run goes on as root of its
  // network stack (as another user, this runs ferry-bench again inside a
  // user namespace and does not return), or skips them with the reason.
  auto netns_row = [](const cell& c) { return c.tr == transport::netns; };
  if (std::any_of(mtx.cells.begin(), mtx.cells.end(), netns_row)) {
    if (auto why = enter_root_of_network_stack(argc, argv); !why.empty()) {
      std::cerr << "ferry-bench: no netns rows: " << why << "\n";
      for (auto& c : mtx.cells)
        if (netns_row(c))
          mtx.skipped.push_back({c, "no emulated hosts: " + why});
      std::erase_if(mtx.cells, netns_row);
      if (mtx.cells.empty())
        return 2;
    }
  }
  report rep;
  rep.mode = opts->quick ? "quick" : "full";
  rep.machine = read_machine();
  rep.command = command_line(argc, argv);
  rep.skipped = mtx.skipped;
  // The physical floor: one warm memcpy per payload size, in this run.
  std::set<uint64_t> sizes;
  uint64_t max_ipc = 0;
  uint64_t max_ipc_json_record = 0;
  uint64_t max_tcp_array = 0;
  uint64_t max_broadcast = 0;
  for (auto& c : mtx.cells) {
    sizes.insert(c.size);
    if (c.tr == transport::ipc)
      max_ipc = std::max(max_ipc, c.size);
    if (c.tr == transport::ipc && c.family == "cereal.json"
        && c.type == payload_type::record)
      max_ipc_json_record = std::max(max_ipc_json_record, c.size);
    if (c.tr == transport::tcp && c.type == payload_type::shared_array)
      max_tcp_array = std::max(max_tcp_array, c.size);
    if (c.pat == pattern::broadcast)
      max_broadcast = std::max(max_broadcast, c.size);
  }
  std::cerr << "ferry-bench: timing memcpy of each payload size\n";
  for (auto size : sizes)
    rep.memcpy_us[size] = memcpy_us(size);
  // One host store for this run, removed at the end. Sized for the largest
  // payload that lives in it: ipc payloads and the tcp and broadcast rows'
  // shared_arrays, which the sender creates here. A window of up to 128 MiB
  // in flight, plus the payload held by the sender and one being written.
  bench_env env;
  env.store_name = "ferry-bench-" + std::to_string(getpid());
  env.host_link_mbit = opts->host_link_mbit;
  // cereal.json writes a record's floats as decimal text with a comma and
  // indentation: its frames are sized at up to 14 times the payload (about
  // what a byte array would take as JSON text), one in the store and one
  // being written.
  auto max_local = std::max({max_ipc, max_tcp_array, max_broadcast});
  env.store_capacity = std::max(
    max_local <= 64 * MiB ? 512 * MiB : 3 * max_local + 512 * MiB,
    max_ipc_json_record == 0 ? 0 : 2 * 14 * max_ipc_json_record + 512 * MiB);
  env.tcp_store_name = env.store_name + "-tcp-peer";
  for (auto& c : mtx.cells)
    if (c.tr == transport::tls)
      env.pki_dir = (std::filesystem::temp_directory_path()
                     / ("ferry-bench-tls-" + std::to_string(getpid())))
                      .string();
  // The tcp peer's own store receives copies of shared_array payloads: one
  // being pulled, one being read and one spare, and below the pull
  // threshold a oneway window of copies (128 MiB) waiting in the sink's
  // mailbox. On top, the eighth of a store that copies landed ahead of
  // their delivery may take (framework/src/node/landings.hpp).
  auto tcp_needed = 3 * max_tcp_array + 128 * MiB + 16 * MiB;
  env.tcp_store_capacity = tcp_needed + tcp_needed / 7;
  ferry::store::store_config sc;
  sc.name = env.store_name;
  sc.capacity = env.store_capacity;
  // Rows measure warm stores: every page allocated and mapped up front.
  sc.prefault = true;
  std::cerr << "ferry-bench: store " << env.store_name << " ("
            << size_label(env.store_capacity) << ")\n";
  auto store = ferry::store::object_store::attach(sc);
  if (!store)
    std::cerr << "ferry-bench: cannot attach the store; ipc rows will fail\n";
  std::map<std::string, std::unique_ptr<group>> groups;
  std::map<std::string, std::string> broken;
  // Groups (a node or actor system here, a peer process there) live
  // through a transport's sets, and are renewed for its 1 GiB sets: every
  // group keeps buffers as large as the largest payload it moved (CAF's
  // BASP buffers, the vector pool, a peer's read buffer), and those of the
  // 64 MiB sets beside the 1 GiB ones, in a dozen processes at once, do not
  // fit a 24 GiB machine.
  std::optional<std::pair<transport, bool>> current;
  // netns sets: two emulated hosts, this thread (and the groups' threads it
  // starts) on host 0 and the peers on host 1, while the set's groups live.
  std::unique_ptr<emulated_hosts> hosts;
  std::optional<scoped_network_namespace> on_host;
  std::string hosts_error;
  auto leave_hosts = [&] {
    on_host.reset();
    hosts.reset();
    env.peer_address = "127.0.0.1";
    env.peer_place.clear();
  };
  auto enter_hosts = [&] {
    hosts_error.clear();
    try {
      hosts = std::make_unique<emulated_hosts>(2, env.host_link_mbit);
      on_host.emplace(hosts->namespace_path(0));
      env.peer_address = hosts->address(1);
      env.peer_place = {"--netns=" + hosts->namespace_path(1)};
    } catch (std::exception& e) {
      leave_hosts();
      hosts_error = e.what();
    }
  };
  auto group_of = [&](const cell& c) -> group* {
    auto set_key = std::pair{set_transport(c.tr), c.size >= 1024 * MiB};
    if (!current || *current != set_key) {
      groups.clear();
      // What the process-wide vector pool kept for the groups just gone.
      ferry::serializers::trim_vector_pool(true);
      current = set_key;
      leave_hosts();
      if (set_key.first == transport::netns)
        enter_hosts();
    }
    auto key = to_string(c.tr) + "/" + c.family;
    if (c.tr == transport::netns && !hosts_error.empty())
      broken[key] = hosts_error;
    if (!groups.count(key) && !broken.count(key)) {
      try {
        groups[key] = is_caf_family(c.family)
                        ? make_caf_group(c.tr, c.family == raw_caf_tuned, env)
                      : is_limit_family(c.family)
                        ? make_limit_group(c.tr, env)
                        : make_ferry_group(c.tr, c.family, env);
      } catch (std::exception& e) {
        broken[key] = e.what();
      }
    }
    if (auto i = broken.find(key); i != broken.end())
      return nullptr;
    return groups[key].get();
  };
  auto broken_reason = [&](const cell& c) {
    return broken[to_string(c.tr) + "/" + c.family];
  };
  auto total = mtx.cells.size();
  for (size_t first = 0; first < total;) {
    auto last = first + 1;
    while (last < total && same_set(mtx.cells[first], mtx.cells[last]))
      ++last;
    auto& head = mtx.cells[first];
    std::cerr << "[" << first + 1;
    if (last - first > 1)
      std::cerr << "-" << last;
    std::cerr << "/" << total << "] " << to_string(head.tr) << " "
              << size_label(head.size) << " " << to_string(head.pat)
              << ": warm-up" << std::flush;
    std::vector<result> rows;
    std::vector<std::unique_ptr<trial>> trials;
    for (auto i = first; i < last; ++i) {
      auto& c = mtx.cells[i];
      result r;
      r.c = c;
      std::unique_ptr<trial> t;
      if (c.pat == pattern::broadcast) {
        // Four nodes of its own, sized for its payload: the groups go
        // first, so their buffers do not add up with the row's stores.
        groups.clear();
        current.reset();
        leave_hosts();
        ferry::serializers::trim_vector_pool(true);
        fill(r, measure_broadcast(c, params_for(c, *opts), env));
      } else if (auto* g = group_of(c); g == nullptr) {
        r.error = broken_reason(c);
      } else if (c.pat == pattern::handoff) {
        fill(r, g->handoff(c, params_for(c, *opts)));
        if (r.ok)
          r.memcpy_us = rep.memcpy_us[c.size];
      } else {
        try {
          t = g->start(c, params_for(c, *opts));
          if (!t->warm_up()) {
            fill(r, t->result());
            t.reset();
          }
        } catch (std::exception& e) {
          r.error = e.what();
          t.reset();
        }
      }
      rows.push_back(std::move(r));
      trials.push_back(std::move(t));
    }
    int rounds = 0;
    for (auto& t : trials)
      if (t)
        rounds = std::max(rounds, t->rounds());
    std::vector<bool> failed(trials.size(), false);
    // The baseline goes first in every round; the ferry rows after it take
    // turns at being the first of them. Whatever the baseline leaves behind
    // (its receiver peaks at three times the payload; on this VM, memory it
    // frees comes back slowly the next time it is touched) then hits a
    // different row each round and drops out of the medians, instead of
    // always landing on the same row (ipc 1 GiB: raw, always first, read
    // 1.3-1.7x CAF against 4.6-5.7x for cereal.binary after it; run alone,
    // raw read 3.4x and cereal.binary 4.1x).
    for (int k = 0; k < rounds; ++k) {
      std::cerr << ", round " << k + 1 << "/" << rounds << std::flush;
      auto n = trials.size();
      for (size_t j = 0; j < n; ++j) {
        auto i = j == 0 || n <= 2
                   ? j
                   : 1 + (j - 1 + static_cast<size_t>(k)) % (n - 1);
        if (trials[i] && !failed[i] && k < trials[i]->rounds())
          failed[i] = !trials[i]->round(); // result() then says why
      }
    }
    std::cerr << "\n";
    for (size_t i = 0; i < rows.size(); ++i) {
      if (trials[i])
        fill(rows[i], trials[i]->result());
      if (rows[i].c.tr == transport::netns)
        rows[i].host_link_mbit = env.host_link_mbit;
      std::cerr << "  " << rows[i].c.label() << ": "
                << progress_figure(rows[i]) << "\n";
      rep.results.push_back(std::move(rows[i]));
    }
    trials.clear();
    clear_payload_cache();
    first = last;
  }
  // The Python rows, beside the matrix over loopback (python_runs.hpp).
  groups.clear();
  leave_hosts();
  if (python_selected(*opts)) {
    std::cerr << "ferry-bench: Python round trips\n";
    rep.python = measure_python(env, opts->quick ? 1.0 : 3.0,
                                opts->rounds > 0 ? opts->rounds : 5);
  }
  if (store)
    store->detach();
  static_cast<void>(ferry::store::object_store::remove(env.store_name));
  static_cast<void>(ferry::store::object_store::remove(env.tcp_store_name));
  for (int i = 1; i <= broadcast_receivers; ++i)
    static_cast<void>(ferry::store::object_store::remove(
      broadcast_store_name(env.tcp_store_name, i)));
  if (!env.pki_dir.empty())
    std::filesystem::remove_all(env.pki_dir);
  compute_ratios(rep.results);
  rep.wall_seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - started)
                       .count();
  print_table(rep);
  bool ok = true;
  if (!opts->json.empty())
    ok = write_json(rep, opts->json) && ok;
  if (!opts->plot.empty())
    ok = write_plot(rep, opts->plot) && ok;
  return ok ? 0 : 1;
}
