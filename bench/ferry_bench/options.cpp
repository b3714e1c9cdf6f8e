// Options, the benchmark matrix and per-cell run parameters.
#include "matrix.hpp"

#include "bench_types.hpp"

#include "ferry/serializers/diagnostics.hpp"
#include "ferry/store/shared_array.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
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
  --transport T[,T]       inproc, ipc, tcp, tls (tcp over TLS links)
  --family F[,F]          raw, cereal.binary, cereal.portable, cereal.json,
                          msgpack, caf, raw-caf, raw-caf-tuned, ferry (inproc
                          ferry rows), socket (tcp limit), memcpy (ipc limit)
  --payload S[,S]         sizes: 64, 4K, 64K, 1M, 64M, 1G
  --pattern P[,P]         oneway, pingpong, handoff
  --type T[,T]            bytes, record, shared_array
  --seconds S             measurement time per cell (default 0.3 quick, 1 full)
  --rounds N              rounds per cell, sharing its measurement time
                          (default 5)
  --handoff-runs N        hand-off runs (default 5 quick, 7 full)
  --json FILE             write the results as JSON
  --plot FILE.png         draw throughput against payload size (gnuplot)
  --metrics               run every ferry row twice: as selected, and with
                          the Prometheus endpoint on in both nodes
                          (family "<family>+metrics")
  --list                  print the cells (and skipped ones) and exit
  --help                  this text

The reference rows of every selected cell's transport, size and pattern
always run: raw-caf (CAF as shipped) and raw-caf-tuned (CAF given ferry's
scheduler and middleman settings), each sending the cell's payload type
(bytes for a shared_array), and the physical limit (tcp: a plain socket,
ipc: one memcpy). So every row has its ratio, ratio_tuned and, over ipc and
tcp, ratio_to_limit; a tls row's ratio is over the plain ferry tcp row of
the same family, type, size and pattern.

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

/// Which built-in families can encode each payload type, and why not.
struct encodability {
  std::map<std::string, std::string> blocked; // family -> reason
};

template <class T>
encodability encodability_of() {
  encodability result;
  auto report = serializers::inspect_serializability<T>();
  for (auto& [family, why] : report.blocked)
    result.blocked[family] = why;
  return result;
}

const encodability& encodability_of(payload_type type) {
  static const encodability bytes
    = encodability_of<std::vector<std::byte>>();
  static const encodability record = encodability_of<bench_record>();
  static const encodability shared
    = encodability_of<store::shared_array<std::byte>>();
  switch (type) {
    case payload_type::bytes: return bytes;
    case payload_type::record: return record;
    default: return shared;
  }
}

class matrix_builder {
public:
  matrix_builder(const options& opts, matrix& out) : opts_(opts), out_(out) {
    // nop
  }

  /// Adds the cell if the filters select it, or records why it is skipped.
  void add(transport tr, const std::string& family, payload_type type,
           uint64_t size, pattern pat) {
    cell c{tr, family, type, size, pat};
    if (!selected(c))
      return;
    if (auto why = impossible(c)) {
      for (auto& s : out_.skipped)
        if (s.c.label() == c.label())
          return;
      out_.skipped.push_back({c, *why});
      return;
    }
    for (auto& x : out_.cells)
      if (x.label() == c.label())
        return;
    out_.cells.push_back(c);
  }

private:
  bool selected(const cell& c) const {
    auto& o = opts_;
    if (!o.transports.empty() && !contains(o.transports, to_string(c.tr)))
      return false;
    if (!o.families.empty() && !contains(o.families, c.family))
      return false;
    if (!o.payloads.empty() && !contains(o.payloads, c.size))
      return false;
    if (!o.patterns.empty() && !contains(o.patterns, to_string(c.pat)))
      return false;
    if (!o.types.empty() && !contains(o.types, to_string(c.type)))
      return false;
    return true;
  }

  std::optional<std::string> impossible(const cell& c) const {
    if (c.type == payload_type::shared_array) {
      if (c.tr == transport::inproc)
        return std::string{"a shared_array needs no transport in one "
                           "process: the handle is the message"};
      if (c.tr == transport::tcp && c.pat == pattern::handoff)
        return std::string{"across hosts a shared_array is copied into the "
                           "receiver's store (pulled in chunks): no hand-off "
                           "without a copy; ipc only"};
      if (is_caf_family(c.family))
        return std::string{"plain CAF has no store: shared_array needs ferry"};
      if (c.size < MiB)
        return std::string{"shared_array rows start at 1 MiB"};
    }
    if (c.type == payload_type::record && c.size > 64 * MiB)
      return std::string{"record rows stop at 64 MiB: a 1 GiB record takes "
                         "minutes per message through CAF's element-wise "
                         "float serialization and JSON text would exceed "
                         "CAF's 4 GiB message limit"};
    if (is_limit_family(c.family)) {
      if (c.family != limit_family_of(c.tr))
        return "the " + c.family + " limit row belongs to "
               + (c.family == socket_limit ? "tcp" : "ipc") + " sets";
      if (c.type != payload_type::bytes || c.pat == pattern::handoff)
        return std::string{"limit rows send bytes, oneway and pingpong"};
      return std::nullopt;
    }
    if (is_caf_family(c.family) || c.family == inproc_ferry)
      return std::nullopt;
    auto& enc = encodability_of(c.type);
    if (auto i = enc.blocked.find(c.family); i != enc.blocked.end())
      return "family " + c.family + " cannot encode "
             + to_string(c.type) + ": " + i->second;
    return std::nullopt;
  }

  const options& opts_;
  matrix& out_;
};

} // namespace

// -- names ---------------------------------------------------------------------

std::string to_string(transport x) {
  switch (x) {
    case transport::inproc: return "inproc";
    case transport::ipc: return "ipc";
    case transport::tls: return "tls";
    default: return "tcp";
  }
}

std::string to_string(pattern x) {
  switch (x) {
    case pattern::oneway: return "oneway";
    case pattern::pingpong: return "pingpong";
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

namespace {

/// Every payload size of the full matrix, and those of the quick one.
const std::vector<uint64_t> matrix_sizes{64,  4 * KiB,  64 * KiB,
                                         MiB, 64 * MiB, GiB};
const std::vector<uint64_t> quick_sizes{64, 4 * KiB, MiB, 64 * MiB};

} // namespace

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
    } else if (arg == "--transport" || arg == "--family" || arg == "--payload"
               || arg == "--pattern" || arg == "--type" || arg == "--json"
               || arg == "--plot" || arg == "--seconds"
               || arg == "--rounds" || arg == "--handoff-runs") {
      auto v = take();
      if (!v)
        return fail(arg + " needs a value");
      if (arg == "--transport") {
        for (auto& x : split(*v)) {
          if (x != "inproc" && x != "ipc" && x != "tcp" && x != "tls")
            return fail("unknown transport " + x);
          result.transports.push_back(x);
        }
      } else if (arg == "--family") {
        for (auto& x : split(*v)) {
          auto known = builtin_families();
          known.insert(known.end(), {raw_caf, raw_caf_tuned, inproc_ferry,
                                     socket_limit, memcpy_limit});
          if (!contains(known, x))
            return fail("unknown family " + x);
          result.families.push_back(x);
        }
      } else if (arg == "--payload") {
        for (auto& x : split(*v)) {
          auto n = parse_size(x);
          if (!n || !contains(matrix_sizes, *n))
            return fail("payload size " + x
                        + " is not in the matrix: choose from 64, 4K, 64K, "
                          "1M, 64M, 1G");
          result.payloads.push_back(*n);
        }
      } else if (arg == "--pattern") {
        for (auto& x : split(*v)) {
          if (x != "oneway" && x != "pingpong" && x != "handoff")
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
      if (!contains(quick_sizes, size))
        return fail("payload size " + size_label(size)
                    + " is not in the quick matrix: choose from 64, 4K, 1M, "
                      "64M, or drop --quick");
  return result;
}

// -- matrix --------------------------------------------------------------------

namespace {

/// TLS rows: cereal.binary byte arrays at every size, both patterns up to
/// 1 MiB (oneway above), beside the plain tcp rows they are compared with.
void add_tls_rows(matrix_builder& b, const std::vector<uint64_t>& sizes,
                  const std::vector<pattern>& patterns) {
  for (auto size : sizes)
    for (auto pat : patterns)
      if (size <= MiB || pat == pattern::oneway)
        b.add(transport::tls, "cereal.binary", payload_type::bytes, size,
              pat);
}

} // namespace

matrix build_matrix(const options& opts) {
  matrix result;
  matrix_builder b{opts, result};
  auto fams = builtin_families();
  const std::vector<pattern> both{pattern::oneway, pattern::pingpong};
  if (opts.quick) {
    const auto& sizes = quick_sizes;
    // inproc: CAF against ferry in one process.
    for (auto size : sizes)
      for (auto pat : both)
        for (auto& fam : {raw_caf, inproc_ferry})
          b.add(transport::inproc, fam, payload_type::bytes, size, pat);
    for (auto pat : both)
      for (auto& fam : {raw_caf, inproc_ferry})
        b.add(transport::inproc, fam, payload_type::record, 4 * KiB, pat);
    for (auto tr : {transport::ipc, transport::tcp}) {
      for (auto size : sizes) {
        for (auto pat : both) {
          if (size > MiB && pat == pattern::pingpong)
            continue;
          b.add(tr, raw_caf, payload_type::bytes, size, pat);
          if (size <= 4 * KiB) {
            for (auto& fam : {"caf", "cereal.binary"})
              b.add(tr, fam, payload_type::bytes, size, pat);
            if (size == 4 * KiB && pat == pattern::oneway) {
              for (auto& fam : fams)
                b.add(tr, fam, payload_type::bytes, size, pat);
              b.add(tr, raw_caf, payload_type::record, size, pat);
              for (auto& fam : fams)
                b.add(tr, fam, payload_type::record, size, pat);
            }
          } else if (pat == pattern::oneway) {
            for (auto& fam : {"raw", "cereal.binary", "cereal.portable"})
              b.add(tr, fam, payload_type::bytes, size, pat);
            for (auto& fam : {"cereal.binary", "caf"})
              b.add(tr, fam, payload_type::shared_array, size, pat);
          } else {
            for (auto& fam : {"raw", "cereal.binary"})
              b.add(tr, fam, payload_type::bytes, size, pat);
          }
        }
      }
      b.add(tr, "cereal.binary", payload_type::shared_array, 64 * MiB,
            pattern::handoff);
    }
    add_tls_rows(b, sizes, both);
  } else {
    const auto& sizes = matrix_sizes;
    for (auto size : sizes)
      for (auto pat : both)
        for (auto type : {payload_type::bytes, payload_type::record})
          for (auto& fam : {raw_caf, inproc_ferry})
            b.add(transport::inproc, fam, type, size, pat);
    for (auto tr : {transport::ipc, transport::tcp}) {
      for (auto size : sizes)
        for (auto pat : both)
          for (auto type : {payload_type::bytes, payload_type::record,
                            payload_type::shared_array}) {
            b.add(tr, raw_caf, type, size, pat);
            for (auto& fam : fams)
              b.add(tr, fam, type, size, pat);
          }
      for (auto size : {64 * MiB, GiB})
        b.add(tr, "cereal.binary", payload_type::shared_array, size,
              pattern::handoff);
    }
    add_tls_rows(b, sizes, both);
  }
  // With --metrics each ferry row gets its twin with the endpoint on, in
  // the same set: the two take turns round by round.
  if (opts.metrics) {
    std::vector<cell> twins;
    for (auto& c : result.cells)
      if (c.family != raw_caf && c.pat != pattern::handoff) {
        auto twin = c;
        twin.family += metrics_suffix;
        twins.push_back(twin);
      }
    result.cells.insert(result.cells.end(), twins.begin(), twins.end());
  }
  // Every selected cell gets its reference rows, even when the filters leave
  // them out: raw-caf and raw-caf-tuned sending the cell's payload type
  // (bytes for a shared_array) and bytes (the set's opener), and the limit
  // row of its transport. A tls row's is the plain ferry row of its cell,
  // and that row's.
  auto add_all = [&](auto references_of) {
    std::vector<cell> added;
    for (auto& c : result.cells) {
      for (auto& base : references_of(c)) {
        bool present = false;
        for (auto& x : result.cells)
          present = present || x.label() == base.label();
        for (auto& x : added)
          present = present || x.label() == base.label();
        if (!present)
          added.push_back(base);
      }
    }
    result.cells.insert(result.cells.end(), added.begin(), added.end());
  };
  add_all([](const cell& c) {
    std::vector<cell> out;
    if (c.tr == transport::tls)
      out.push_back(c.plain_twin());
    return out;
  });
  add_all([](const cell& c) {
    std::vector<cell> out;
    if (c.pat == pattern::handoff || is_limit_family(c.family))
      return out;
    auto tr = set_transport(c.tr);
    for (auto& fam : {raw_caf, raw_caf_tuned}) {
      out.push_back(cell{tr, fam, payload_type::bytes, c.size, c.pat});
      if (c.caf_type() != payload_type::bytes)
        out.push_back(cell{tr, fam, c.caf_type(), c.size, c.pat});
    }
    if (auto limit = limit_family_of(tr); !limit.empty())
      out.push_back(cell{tr, limit, payload_type::bytes, c.size, c.pat});
    return out;
  });
  // Order: transport, then (size, pattern): the cells compared with one
  // baseline are neighbours and take turns (see main.cpp), baseline first,
  // then the other reference rows. tls rows join the tcp sets, after the
  // plain rows.
  auto rank = [](const cell& c) {
    if (c.is_baseline())
      return 0;
    if (c.is_reference())
      return 1;
    if (is_caf_family(c.family))
      return 2;
    return c.tr == transport::tls ? 4 : 3;
  };
  std::stable_sort(result.cells.begin(), result.cells.end(),
                   [&](const cell& x, const cell& y) {
                     if (set_transport(x.tr) != set_transport(y.tr))
                       return set_transport(x.tr) < set_transport(y.tr);
                     if ((x.pat == pattern::handoff)
                         != (y.pat == pattern::handoff))
                       return y.pat == pattern::handoff;
                     if (x.size != y.size)
                       return x.size < y.size;
                     if (x.pat != y.pat)
                       return x.pat < y.pat;
                     return rank(x) < rank(y);
                   });
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
