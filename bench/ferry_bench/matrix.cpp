// The benchmark matrix: which cells a mode runs, which the filters select,
// which cannot be measured (and why), the reference rows every selected cell
// brings along, and the order the cells run in (see matrix.hpp).
#include "matrix.hpp"

#include "bench_types.hpp"

#include "ferry/serializers/diagnostics.hpp"
#include "ferry/store/shared_array.hpp"

#include <algorithm>
#include <map>

namespace ferry::bench {

namespace {

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;
constexpr uint64_t GiB = 1024 * MiB;

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
    if (c.pat == pattern::broadcast
        && ((c.tr != transport::tcp && c.tr != transport::netns)
            || c.type != payload_type::shared_array
            || is_caf_family(c.family) || is_limit_family(c.family)))
      return std::string{"a broadcast sends a ferry store object "
                         "(shared_array) to nodes on other hosts: tcp or "
                         "netns, ferry families only"};
    if (c.tr == transport::netns && c.pat != pattern::broadcast
        && (c.pat != pattern::oneway || c.type != payload_type::bytes
            || is_caf_family(c.family) || c.family == memcpy_limit))
      return std::string{"netns rows are broadcasts and byte arrays one way, "
                         "ferry families and the socket (CAF's baselines run "
                         "over loopback)"};
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
               + (c.family == socket_limit       ? "tcp and netns"
                  : c.family == tls_socket_limit ? "tls"
                                                 : "ipc")
               + " rows";
      if (c.type != payload_type::bytes || is_one_shot(c.pat))
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
    const auto& sizes = quick_sizes();
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
    // The family hardly matters: the payload is a store handle.
    for (auto tr : {transport::tcp, transport::netns})
      b.add(tr, "cereal.binary", payload_type::shared_array, 64 * MiB,
            pattern::broadcast);
    add_tls_rows(b, sizes, both);
  } else {
    const auto& sizes = matrix_sizes();
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
    for (auto tr : {transport::tcp, transport::netns})
      for (auto size : {64 * MiB, GiB})
        b.add(tr, "cereal.binary", payload_type::shared_array, size,
              pattern::broadcast);
    // 1 GiB between emulated hosts: what the receiver keeps when the bytes
    // come at a network card's pace.
    b.add(transport::netns, "cereal.binary", payload_type::bytes, GiB,
          pattern::oneway);
    add_tls_rows(b, sizes, both);
  }
  // With --metrics each ferry row gets its twin with the endpoint on, in
  // the same set: the two take turns round by round.
  if (opts.metrics) {
    std::vector<cell> twins;
    for (auto& c : result.cells)
      if (c.family != raw_caf && !is_one_shot(c.pat)) {
        auto twin = c;
        twin.family += metrics_suffix;
        twins.push_back(twin);
      }
    result.cells.insert(result.cells.end(), twins.begin(), twins.end());
  }
  // Every selected cell gets its reference rows, even when the filters leave
  // them out: raw-caf and raw-caf-tuned sending the cell's payload type
  // (bytes for a shared_array) and bytes (the set's opener), and the limit
  // row of its transport. A tls row's are the plain ferry row of its cell,
  // that row's, and the tls-socket row of its size and pattern.
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
    if (is_one_shot(c.pat) || is_limit_family(c.family))
      return out;
    auto tr = set_transport(c.tr);
    for (auto& fam : {raw_caf, raw_caf_tuned}) {
      if (tr == transport::netns)
        break;
      out.push_back(cell{tr, fam, payload_type::bytes, c.size, c.pat});
      if (c.caf_type() != payload_type::bytes)
        out.push_back(cell{tr, fam, c.caf_type(), c.size, c.pat});
    }
    if (auto limit = limit_family_of(tr); !limit.empty())
      out.push_back(cell{tr, limit, payload_type::bytes, c.size, c.pat});
    if (c.tr == transport::tls)
      out.push_back(cell{c.tr, limit_family_of(c.tr), payload_type::bytes,
                         c.size, c.pat});
    return out;
  });
  // Order: transport, then (size, pattern): the cells compared with one
  // baseline are neighbours and take turns (see main.cpp), baseline first,
  // then the other reference rows. tls rows join the tcp sets, after the
  // plain rows. The rows measured at once (hand-off, broadcast) close their
  // transport.
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
                     if (is_one_shot(x.pat) != is_one_shot(y.pat))
                       return is_one_shot(y.pat);
                     if (x.size != y.size)
                       return x.size < y.size;
                     if (x.pat != y.pat)
                       return x.pat < y.pat;
                     return rank(x) < rank(y);
                   });
  return result;
}

} // namespace ferry::bench
