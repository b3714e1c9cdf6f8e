// Names, command-line options and per-cell run parameters (see matrix.hpp;
// the matrix itself is built in matrix.cpp).
#include "matrix.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>

namespace ferry::bench {

namespace {

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;
constexpr uint64_t GiB = 1024 * MiB;

const char* usage_text = R"(usage: ferry-bench [--quick] [filters] [--json FILE] [--plot FILE.png]

Message throughput and latency between two actors, ferry against plain CAF
(raw-caf) in the same run. See bench/ferry_bench/README.md.

  --quick                 the quick subset (what `bash dev.sh bench` runs)
  --transport T[,T]       inproc, ipc, tcp, tls (tcp over TLS links), netns
                          (tcp between network namespaces: broadcast rows
                          between hosts of their own)
  --family F[,F]          raw, cereal.binary, cereal.portable, cereal.json,
                          msgpack, caf, raw-caf, raw-caf-tuned, ferry (inproc
                          ferry rows), socket (tcp limit), tls-socket (tls
                          limit), memcpy (ipc limit), python (round trips
                          from a Python peer and a Python socket, 64 B, tcp)
  --payload S[,S]         sizes: 64, 4K, 64K, 1M, 64M, 1G
  --pattern P[,P]         oneway, pingpong, handoff, broadcast
  --type T[,T]            bytes, record, shared_array
  --seconds S             measurement time per cell (default 0.3 quick, 1 full)
  --rounds N              rounds per cell, sharing its measurement time
                          (default 5)
  --handoff-runs N        hand-off and broadcast runs (default 5 quick,
                          7 full)
  --host-link-mbit N      netns rows: each host's link rate, each way, in
                          Mbit/s (default 1000)
  --json FILE             write the results as JSON
  --plot FILE.png         draw throughput against payload size (gnuplot)
  --metrics               run every ferry row twice: as selected, and with
                          the Prometheus endpoint on in both nodes
                          (family "<family>+metrics")
  --load                  the load program instead of the matrix: a
                          request/response service on one process driven
                          by client processes at fixed offered rates,
                          stepped up (ferry with caf and cereal.binary,
                          raw-caf-tuned; tcp and ipc); --plot draws p99
                          latency against the offered rate
  --load-clients N        client processes (default 2)
  --load-rates R[,R]      offered rates, requests a second over all clients
                          (default 1000 to 200000)
  --load-step-seconds S   time of each step (default 1 quick, 3 full)
  --entities              the entity program instead of the matrix: an
                          entity's round trip beside a plain remote
                          actor's, activation latency, requests a second to
                          many entities without state and saving to SQLite
                          and PostgreSQL, and the time to rebalance them
                          when a fifth member joins
  --entity-keys N         entities the program asks (default 10000)
  --list                  print the cells (and skipped ones) and exit
  --help                  this text

The reference rows of every selected cell's transport, size and pattern
always run: raw-caf (CAF as shipped) and raw-caf-tuned (CAF given ferry's
scheduler settings, no BASP workers and heartbeats), each sending the cell's
payload type (bytes for a shared_array), and the physical limit (tcp: a
plain socket, tls: OpenSSL over one, ipc: one memcpy). So every row has its
ratio, ratio_tuned and, over ipc, tcp and tls, ratio_to_limit; a tls row's
ratio is over the plain ferry tcp row of the same family, type, size and
pattern, and it has no ratio_tuned.

)";

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> result;
  std::stringstream in{text};
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty())
      result.push_back(item);
  return result;
}

template <class T>
bool contains(const std::vector<T>& xs, const T& x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

} // namespace

// -- names ---------------------------------------------------------------------

std::string to_string(transport x) {
  switch (x) {
    case transport::inproc: return "inproc";
    case transport::ipc: return "ipc";
    case transport::tls: return "tls";
    case transport::netns: return "netns";
    default: return "tcp";
  }
}

std::string to_string(pattern x) {
  switch (x) {
    case pattern::oneway: return "oneway";
    case pattern::pingpong: return "pingpong";
    case pattern::broadcast: return "broadcast";
    default: return "handoff";
  }
}

std::string to_string(payload_type x) {
  switch (x) {
    case payload_type::bytes: return "bytes";
    case payload_type::record: return "record";
    default: return "shared_array";
  }
}

std::vector<std::string> builtin_families() {
  return {"raw", "cereal.binary", "cereal.portable", "cereal.json", "msgpack",
          "caf"};
}

std::string size_label(uint64_t bytes) {
  if (bytes >= GiB && bytes % GiB == 0)
    return std::to_string(bytes / GiB) + " GiB";
  if (bytes >= MiB && bytes % MiB == 0)
    return std::to_string(bytes / MiB) + " MiB";
  if (bytes >= KiB && bytes % KiB == 0)
    return std::to_string(bytes / KiB) + " KiB";
  return std::to_string(bytes) + " B";
}

std::optional<uint64_t> parse_size(const std::string& text) {
  char* end = nullptr;
  auto n = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str())
    return std::nullopt;
  std::string unit{end};
  std::transform(unit.begin(), unit.end(), unit.begin(),
                 [](unsigned char ch) { return std::tolower(ch); });
  if (unit.empty() || unit == "b")
    return n;
  if (unit == "k" || unit == "kib" || unit == "kb")
    return n * KiB;
  if (unit == "m" || unit == "mib" || unit == "mb")
    return n * MiB;
  if (unit == "g" || unit == "gib" || unit == "gb")
    return n * GiB;
  return std::nullopt;
}

std::string cell::label() const {
  return to_string(tr) + " " + family + " " + to_string(type) + " "
         + size_label(size) + " " + to_string(pat);
}

// -- options -------------------------------------------------------------------

const std::vector<uint64_t>& matrix_sizes() {
  static const std::vector<uint64_t> sizes{64,  4 * KiB,  64 * KiB,
                                           MiB, 64 * MiB, GiB};
  return sizes;
}

const std::vector<uint64_t>& quick_sizes() {
  static const std::vector<uint64_t> sizes{64, 4 * KiB, MiB, 64 * MiB};
  return sizes;
}

std::optional<options> parse_options(int argc, char** argv, int& exit_code) {
  options result;
  exit_code = 0;
  auto fail = [&](const std::string& msg) -> std::optional<options> {
    std::cerr << "ferry-bench: " << msg << "\n\n" << usage_text;
    exit_code = 2;
    return std::nullopt;
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    auto eq = arg.find('=');
    bool has_value = false;
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto take = [&]() -> std::optional<std::string> {
      if (has_value)
        return value;
      if (i + 1 < argc)
        return std::string{argv[++i]};
      return std::nullopt;
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << usage_text;
      return std::nullopt;
    } else if (arg == "--quick") {
      result.quick = true;
    } else if (arg == "--full") {
      result.quick = false;
    } else if (arg == "--list") {
      result.list = true;
    } else if (arg == "--metrics") {
      result.metrics = true;
    } else if (arg == "--load") {
      result.load = true;
    } else if (arg == "--entities") {
      result.entities = true;
    } else if (arg == "--transport" || arg == "--family" || arg == "--payload"
               || arg == "--pattern" || arg == "--type" || arg == "--json"
               || arg == "--plot" || arg == "--seconds"
               || arg == "--rounds" || arg == "--handoff-runs"
               || arg == "--host-link-mbit" || arg == "--load-clients"
               || arg == "--load-rates" || arg == "--load-step-seconds"
               || arg == "--entity-keys") {
      auto v = take();
      if (!v)
        return fail(arg + " needs a value");
      if (arg == "--transport") {
        for (auto& x : split(*v)) {
          if (x != "inproc" && x != "ipc" && x != "tcp" && x != "tls"
              && x != "netns")
            return fail("unknown transport " + x);
          result.transports.push_back(x);
        }
      } else if (arg == "--family") {
        for (auto& x : split(*v)) {
          auto known = builtin_families();
          known.insert(known.end(), {raw_caf, raw_caf_tuned, inproc_ferry,
                                     socket_limit, tls_socket_limit,
                                     memcpy_limit, "python"});
          if (!contains(known, x))
            return fail("unknown family " + x);
          result.families.push_back(x);
        }
      } else if (arg == "--payload") {
        for (auto& x : split(*v)) {
          auto n = parse_size(x);
          if (!n || !contains(matrix_sizes(), *n))
            return fail("payload size " + x
                        + " is not in the matrix: choose from 64, 4K, 64K, "
                          "1M, 64M, 1G");
          result.payloads.push_back(*n);
        }
      } else if (arg == "--pattern") {
        for (auto& x : split(*v)) {
          if (x != "oneway" && x != "pingpong" && x != "handoff"
              && x != "broadcast")
            return fail("unknown pattern " + x);
          result.patterns.push_back(x);
        }
      } else if (arg == "--type") {
        for (auto& x : split(*v)) {
          if (x != "bytes" && x != "record" && x != "shared_array")
            return fail("unknown payload type " + x);
          result.types.push_back(x);
        }
      } else if (arg == "--json") {
        result.json = *v;
      } else if (arg == "--plot") {
        result.plot = *v;
      } else if (arg == "--seconds") {
        result.seconds = std::atof(v->c_str());
        if (result.seconds <= 0)
          return fail("--seconds must be positive");
      } else if (arg == "--rounds") {
        result.rounds = std::atoi(v->c_str());
        if (result.rounds <= 0)
          return fail("--rounds must be positive");
      } else if (arg == "--load-clients") {
        result.load_clients = std::atoi(v->c_str());
        if (result.load_clients <= 0 || result.load_clients > 64)
          return fail("--load-clients must be between 1 and 64");
      } else if (arg == "--load-rates") {
        for (auto& x : split(*v)) {
          auto rate = std::atof(x.c_str());
          if (rate <= 0)
            return fail("--load-rates takes positive rates, not " + x);
          result.load_rates.push_back(rate);
        }
      } else if (arg == "--load-step-seconds") {
        result.load_step_seconds = std::atof(v->c_str());
        if (result.load_step_seconds <= 0)
          return fail("--load-step-seconds must be positive");
      } else if (arg == "--entity-keys") {
        auto n = std::atoll(v->c_str());
        if (n < 100 || n > 1'000'000)
          return fail("--entity-keys must be between 100 and 1000000");
        result.entity_keys = static_cast<uint64_t>(n);
      } else if (arg == "--host-link-mbit") {
        auto mbit = std::atoll(v->c_str());
        if (mbit <= 0 || mbit > 400000)
          return fail("--host-link-mbit must be between 1 and 400000");
        result.host_link_mbit = static_cast<uint64_t>(mbit);
      } else {
        result.handoff_runs = std::atoi(v->c_str());
        if (result.handoff_runs <= 0)
          return fail("--handoff-runs must be positive");
      }
    } else {
      return fail("unknown argument " + arg);
    }
  }
  if (result.quick)
    for (auto size : result.payloads)
      if (!contains(quick_sizes(), size))
        return fail("payload size " + size_label(size)
                    + " is not in the quick matrix: choose from 64, 4K, 1M, "
                      "64M, or drop --quick");
  return result;
}


run_params params_for(const cell& c, const options& opts) {
  run_params p;
  // At most 128 MiB (and 1024 messages) unacknowledged; the receiver acks
  // every quarter window.
  p.window = std::clamp<uint64_t>((128 * MiB) / c.size, 1, 1024);
  p.ack_every = std::max<uint64_t>(1, p.window / 4);
  bool big = c.size >= 16 * MiB;
  if (opts.quick) {
    p.seconds = opts.seconds > 0 ? opts.seconds : 0.3;
    p.warmup_seconds = 0.05;
    p.handoff_runs = opts.handoff_runs > 0 ? opts.handoff_runs : 5;
    p.slow_cell_seconds = 3;
  } else {
    p.seconds = opts.seconds > 0 ? opts.seconds : 1.0;
    p.warmup_seconds = 0.2;
    p.handoff_runs = opts.handoff_runs > 0 ? opts.handoff_runs : 7;
    p.slow_cell_seconds = 20;
  }
  // Five rounds at every size: the median of three failed whenever two
  // rounds of a large row met the VM's slow fresh pages (ipc 64 MiB
  // cereal.portable read 1.38, 3.57, 1.32 against a steady baseline).
  p.repeats = opts.rounds > 0 ? opts.rounds : 5;
  // The reference rows are what every row of its set is divided by: they
  // run every round. (With the ferry rows' budget, one cold first message of CAF at
  // 1 GiB can make it a one-round cell beside ferry rows of several rounds.)
  // (Ten times the budget: a machine that slows to a crawl still ends.)
  if (c.is_reference())
    p.slow_cell_seconds *= 10;
  // Large rows allocate fresh memory for every message, and on this VM how
  // fast that is depends on what ran just before (memory freed or left
  // untouched for seconds goes back to the host and comes back slowly). So
  // each round starts with untimed messages of its own: one window's worth
  // (oneway), so a receiver that reuses its buffers has them all again. In
  // two full runs without it, tcp 1 GiB raw read half of every other family
  // (1.05 against 1.81-2.20 msg/s); with one message, 2.07 against
  // 2.08-2.12. One message was not a window at 64 MiB (two in flight): after
  // a 27 s cereal.json round, ferry's receivers had freed their idle
  // buffers, and the first two rounds of raw, cereal.binary and
  // cereal.portable read 13-33 msg/s against 70-88 in the others.
  p.warm_each_round = big;
  p.min_messages = (c.size >= GiB || opts.quick) ? 2 : (big ? 3 : 2);
  // A oneway cell of 1 MiB and more warms up with at least one window: its
  // receiver then holds as many buffers as a full window needs before the
  // first round. With one acknowledgement batch (32 messages at 1 MiB) the
  // first quick rounds of ipc 1 MiB ran into fresh memory and read a third
  // of the last (300 against 1,900 msg/s), baseline and ferry alike. Smaller
  // cells warm up with one batch: a window of 1,024 messages took cereal.json
  // 1.8 s at 4 KiB, of a quick run that must end within 2 minutes.
  if (c.pat != pattern::oneway)
    p.warmup_messages = 1;
  else
    p.warmup_messages = c.size >= MiB ? p.window : p.ack_every;
  p.timeout_seconds = c.size >= GiB ? 600 : 120;
  return p;
}

} // namespace ferry::bench
