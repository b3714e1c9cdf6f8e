// Table, JSON and plot (see output.hpp; the target checks are in
// targets.cpp).
#include "output.hpp"

#include "targets.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>
#include <tuple>

#include <unistd.h>

namespace ferry::bench {

namespace {

using key_type = std::tuple<transport, uint64_t, pattern>;

key_type key_of(const cell& c) {
  return {c.tr, c.size, c.pat};
}

} // namespace

std::string fixed(double x, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << x;
  return out.str();
}

namespace {

/// 1234567 -> "1.23 M", 12345 -> "12.3 k".
std::string human(double x) {
  if (x >= 1e6)
    return fixed(x / 1e6, 2) + " M";
  if (x >= 1e4)
    return fixed(x / 1e3, 1) + " k";
  if (x >= 100)
    return fixed(x, 0);
  return fixed(x, 2);
}

/// A ratio in 8 characters: 2 decimals, none from 1000 on, and small
/// ones (a limit row far ahead) with two significant digits.
std::string ratio_text(double x) {
  if (x >= 1000)
    return fixed(x, 0);
  if (x >= 0.01 || x == 0)
    return fixed(x, 2);
  std::ostringstream out;
  out << std::scientific << std::setprecision(1) << x;
  return out.str();
}

} // namespace

std::string json_escape(const std::string& x) {
  std::string out;
  for (char ch : x) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", ch);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string json_number(double x) {
  if (!std::isfinite(x))
    return "null";
  std::ostringstream out;
  out << std::setprecision(6) << x;
  return out.str();
}

bool run_gnuplot(const std::string& script, const std::string& data,
                 const std::string& dir) {
  auto rc = std::system(("gnuplot '" + script + "'").c_str());
  if (rc != 0) {
    std::cerr << "ferry-bench: gnuplot failed (exit " << rc << "); data in "
              << data << "\n";
    return false;
  }
  if (std::system(("rm -rf '" + dir + "'").c_str()) != 0)
    std::cerr << "ferry-bench: could not remove " << dir << "\n";
  return true;
}

void compute_ratios(std::vector<result>& results) {
  // CAF's rows by (transport, payload type, size, pattern).
  using caf_key = std::tuple<transport, payload_type, uint64_t, pattern>;
  std::map<caf_key, double> caf;
  std::map<caf_key, double> tuned;
  // The limit rows' rate and p50 round trip.
  std::map<key_type, std::pair<double, double>> limit;
  std::map<std::string, double> plain;
  for (auto& x : results) {
    if (!x.ok)
      continue;
    caf_key k{x.c.tr, x.c.type, x.c.size, x.c.pat};
    if (x.c.family == raw_caf)
      caf[k] = x.msgs_per_s;
    if (x.c.family == raw_caf_tuned)
      tuned[k] = x.msgs_per_s;
    if (is_limit_family(x.c.family))
      limit[key_of(x.c)] = {x.msgs_per_s, x.p50_us};
    if (x.c.tr == transport::tcp)
      plain[x.c.label()] = x.msgs_per_s;
  }
  // Throughput over the limit's; a round trip: the limit's over the row's.
  auto against_limit = [&limit](result& x) {
    if (auto i = limit.find(key_of(x.c)); i != limit.end()) {
      auto [rate, p50] = i->second;
      if (x.c.pat == pattern::oneway && rate > 0)
        x.ratio_to_limit = x.msgs_per_s / rate;
      else if (x.c.pat == pattern::pingpong && x.p50_us > 0)
        x.ratio_to_limit = p50 / x.p50_us;
    }
  };
  for (auto& x : results) {
    x.baseline_msgs_per_s = 0;
    x.ratio = 0;
    x.tuned_msgs_per_s = 0;
    x.ratio_tuned = 0;
    x.ratio_to_limit = -1;
    if (!x.ok || is_one_shot(x.c.pat))
      continue;
    // The limit rows are no other rows' rivals: no ratio.
    if (is_limit_family(x.c.family))
      continue;
    // A tls row against the plain ferry row of its cell, and against the
    // tls-socket row of its size and pattern.
    if (x.c.tr == transport::tls) {
      if (auto i = plain.find(x.c.plain_twin().label());
          i != plain.end() && i->second > 0) {
        x.baseline_msgs_per_s = i->second;
        x.ratio = x.msgs_per_s / i->second;
      }
      against_limit(x);
      continue;
    }
    caf_key k{x.c.tr, x.c.caf_type(), x.c.size, x.c.pat};
    if (auto i = caf.find(k); i != caf.end() && i->second > 0) {
      x.baseline_msgs_per_s = i->second;
      x.ratio = x.c.family == raw_caf ? 1.0 : x.msgs_per_s / i->second;
    }
    if (auto i = tuned.find(k); i != tuned.end() && i->second > 0) {
      x.tuned_msgs_per_s = i->second;
      x.ratio_tuned
        = x.c.family == raw_caf_tuned ? 1.0 : x.msgs_per_s / i->second;
    }
    against_limit(x);
  }
}

void print_table(const report& r) {
  auto& m = r.machine;
  std::cout << "\nferry-bench (" << r.mode << "): " << m.cpu << ", " << m.cores
            << " cores, " << fixed(m.memory_gib, 1) << " GiB, " << m.kernel
            << ", CAF " << m.caf_version << ", " << m.date << "\n";
  if (!r.results.empty()) {
    std::cout << "memcpy (warm, one copy):";
    for (auto& [size, us] : r.memcpy_us)
      std::cout << "  " << size_label(size) << " "
                << fixed(us, us < 10 ? 3 : 0) << " us";
    std::cout << "\n";
  }
  if (!r.results.empty())
    std::cout
      << "ratio = msgs/s over the raw-caf row (CAF as shipped) sending the "
         "same payload type (bytes for a shared_array), transport, size and "
         "pattern, measured in the same rounds; tuned = the same over "
         "raw-caf-tuned (CAF given ferry's scheduler settings, no BASP workers "
         "and heartbeats); "
         "limit = over the limit row (tcp: a plain socket, tls: OpenSSL over "
         "a plain socket, ipc: one memcpy): oneway msgs/s over its, pingpong "
         "its p50 over the row's (1.0 = at the limit); tls rows: ratio over "
         "the plain ferry tcp row of the same cell, limit over the tls-socket "
         "row\n";
  // The family column fits the longest family (`cereal.binary+metrics`).
  size_t family_width = 15;
  for (auto& x : r.results)
    family_width = std::max(family_width, x.c.family.size());
  std::ostringstream header_line;
  header_line << "  " << std::left
              << std::setw(static_cast<int>(family_width)) << "family"
              << " type          size     pattern       msgs/s "
                 "      MB/s     p50 us     p99 us   ratio   tuned   limit"
                 "  rss MiB\n";
  auto header = header_line.str();
  // tls rows run inside the tcp sets; the table lists them after them.
  auto rows = r.results;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const result& x, const result& y) {
                     return x.c.tr < y.c.tr;
                   });
  std::optional<transport> current;
  for (auto& x : rows) {
    auto& c = x.c;
    if (!current || *current != c.tr) {
      current = c.tr;
      std::cout << "\n" << to_string(c.tr)
                << (c.tr == transport::inproc
                      ? " (one process: ferry is plain CAF, family \"ferry\")"
                      : c.tr == transport::ipc
                          ? " (two processes, shared host store)"
                      : c.tr == transport::tls
                          ? " (tcp over TLS links with mutual "
                            "authentication; ratio against plain ferry tcp, "
                            "limit against tls-socket: TLS 1.3 with OpenSSL "
                            "over a plain socket)"
                      : c.tr == transport::netns
                          ? " (tcp between hosts of their own: a network "
                            "namespace per node, each host's link "
                            + std::to_string(x.host_link_mbit)
                            + " Mbit/s each way)"
                          : " (two processes, no shared store: cross-host "
                            "path over loopback)")
                << "\n"
                << header;
    }
    std::ostringstream line;
    line << "  " << std::left << std::setw(static_cast<int>(family_width))
         << c.family << " "
         << std::setw(13) << to_string(c.type) << " " << std::setw(8)
         << size_label(c.size) << " " << std::setw(9) << to_string(c.pat)
         << std::right;
    if (!x.ok) {
      line << "  FAILED: " << x.error;
    } else {
      line << std::setw(12) << human(x.msgs_per_s) << std::setw(11)
           << human(x.mb_per_s) << std::setw(11) << fixed(x.p50_us, 1)
           << std::setw(11) << fixed(x.p99_us, 1);
      if (c.pat == pattern::handoff)
        line << "  64 B " << fixed(x.small_p50_us, 0) << " us; resent "
             << fixed(x.resend_p50_us, 0) << " us, 64 B "
             << fixed(x.small_resend_p50_us, 0) << " us; memcpy "
             << fixed(x.memcpy_us, 0) << " us";
      else if (c.pat == pattern::broadcast)
        line << "  to one " << fixed(x.single_p50_us, 0) << " us ("
             << fixed(x.broadcast_ratio, 2) << "x; CPU "
             << fixed(x.cpu_ratio, 2) << "x, " << fixed(x.cores_busy, 1)
             << " cores busy), owner copies " << fixed(x.owner_copies, 2);
      else
        line << std::setw(8)
             << (x.baseline_msgs_per_s > 0 ? ratio_text(x.ratio) : "-")
             << std::setw(8)
             << (x.tuned_msgs_per_s > 0 ? ratio_text(x.ratio_tuned) : "-")
             << std::setw(8)
             << (x.ratio_to_limit >= 0 ? ratio_text(x.ratio_to_limit) : "-");
      if (!is_one_shot(c.pat))
        line << std::setw(9)
             << (x.receiver_peak_rss_mb >= 0 ? fixed(x.receiver_peak_rss_mb, 0)
                                             : "-");
    }
    std::cout << line.str() << "\n";
  }
  if (!r.skipped.empty()) {
    std::cout << "\nskipped (" << r.skipped.size() << " cells):\n";
    std::map<std::string, std::vector<std::string>> by_reason;
    for (auto& s : r.skipped)
      by_reason[s.reason].push_back(s.c.label());
    for (auto& [reason, cells] : by_reason) {
      std::cout << "  " << cells.front();
      if (cells.size() > 1)
        std::cout << " and " << cells.size() - 1 << " more";
      std::cout << ": " << reason << "\n";
    }
  }
  if (!r.python.empty()) {
    std::cout << "\nPython round trips (64 B, over loopback; a sanity "
                 "figure):\n";
    for (auto& x : r.python) {
      std::cout << "  " << x.client << ": ";
      if (!x.error.empty())
        std::cout << "not measured: " << x.error << "\n";
      else
        std::cout << fixed(x.msgs_per_s, 0) << " round trips/s, p50 "
                  << fixed(x.p50_us, 1) << " us, p99 " << fixed(x.p99_us, 1)
                  << " us\n";
    }
  }
  if (!r.load.empty())
    print_load(r.load);
  if (!r.entities.empty())
    print_entities(r.entities);
  auto checks = check_targets(r);
  if (!checks.empty()) {
    std::cout << "\ntargets:\n";
    for (auto& c : checks)
      std::cout << "  "
                << (c.met              ? "met   "
                    : c.bound.empty() ? "MISSED"
                                      : "bound ")
                << "  " << c.what
                << ": " << c.row << ": " << c.figure << "\n";
  }
  std::cout << "\nwall time " << fixed(r.wall_seconds, 1) << " s\n";
  std::cout.flush();
}

bool write_json(const report& r, const std::string& path) {
  std::ofstream out{path};
  if (!out) {
    std::cerr << "ferry-bench: cannot write " << path << "\n";
    return false;
  }
  auto& m = r.machine;
  out << "{\n  \"machine\": {\n";
  out << "    \"cpu\": \"" << json_escape(m.cpu) << "\",\n";
  out << "    \"cores\": " << m.cores << ",\n";
  out << "    \"memory_gib\": " << json_number(m.memory_gib) << ",\n";
  out << "    \"kernel\": \"" << json_escape(m.kernel) << "\",\n";
  out << "    \"compiler\": \"" << json_escape(m.compiler) << "\",\n";
  out << "    \"caf_version\": \"" << json_escape(m.caf_version) << "\",\n";
  out << "    \"date\": \"" << json_escape(m.date) << "\",\n";
  out << "    \"mode\": \"" << r.mode << "\",\n";
  out << "    \"wall_seconds\": " << json_number(r.wall_seconds) << ",\n";
  out << "    \"command\": \"" << json_escape(r.command) << "\",\n";
  out << "    \"memcpy_us\": {";
  bool first = true;
  for (auto& [size, us] : r.memcpy_us) {
    out << (first ? "" : ", ") << "\"" << size << "\": " << json_number(us);
    first = false;
  }
  out << "}\n  },\n  \"results\": [";
  first = true;
  for (auto& x : r.results) {
    if (!x.ok)
      continue;
    auto& c = x.c;
    out << (first ? "\n" : ",\n") << "    {\"transport\": \"" << to_string(c.tr)
        << "\", \"family\": \"" << c.family << "\", \"payload_type\": \""
        << to_string(c.type) << "\", \"payload_bytes\": " << c.size
        << ", \"pattern\": \"" << to_string(c.pat)
        << "\", \"msgs_per_s\": " << json_number(x.msgs_per_s)
        << ", \"mb_per_s\": " << json_number(x.mb_per_s)
        << ", \"p50_us\": " << json_number(x.p50_us)
        << ", \"p99_us\": " << json_number(x.p99_us)
        << ", \"baseline_msgs_per_s\": "
        << (x.baseline_msgs_per_s > 0 ? json_number(x.baseline_msgs_per_s)
                                      : "null")
        << ", \"ratio\": "
        << (x.baseline_msgs_per_s > 0 ? json_number(x.ratio) : "null")
        << ", \"tuned_msgs_per_s\": "
        << (x.tuned_msgs_per_s > 0 ? json_number(x.tuned_msgs_per_s) : "null")
        << ", \"ratio_tuned\": "
        << (x.tuned_msgs_per_s > 0 ? json_number(x.ratio_tuned) : "null")
        << ", \"ratio_to_limit\": "
        << (x.ratio_to_limit >= 0 ? json_number(x.ratio_to_limit) : "null")
        << ", \"receiver_peak_rss_mb\": "
        << (x.receiver_peak_rss_mb >= 0 ? json_number(x.receiver_peak_rss_mb)
                                        : "null");
    if (c.pat == pattern::handoff) {
      out << ", \"memcpy_us\": " << json_number(x.memcpy_us)
          << ", \"resend_p50_us\": "
          << (x.resend_p50_us >= 0 ? json_number(x.resend_p50_us) : "null")
          << ", \"small_p50_us\": "
          << (x.small_p50_us >= 0 ? json_number(x.small_p50_us) : "null")
          << ", \"small_resend_p50_us\": "
          << (x.small_resend_p50_us >= 0 ? json_number(x.small_resend_p50_us)
                                         : "null");
    } else if (c.pat == pattern::broadcast) {
      auto known = [](double v) { return v >= 0 ? json_number(v) : "null"; };
      out << ", \"single_p50_us\": " << known(x.single_p50_us)
          << ", \"broadcast_ratio\": " << known(x.broadcast_ratio)
          << ", \"owner_copies\": " << known(x.owner_copies)
          << ", \"relayed_bytes\": " << known(x.relayed_bytes)
          << ", \"cpu_ratio\": " << known(x.cpu_ratio)
          << ", \"cores_busy\": " << known(x.cores_busy);
    } else {
      out << ", \"round_msgs_per_s\": [";
      for (size_t i = 0; i < x.round_msgs_per_s.size(); ++i)
        out << (i == 0 ? "" : ", ") << json_number(x.round_msgs_per_s[i]);
      out << "]";
    }
    if (c.tr == transport::netns)
      out << ", \"host_link_mbit\": " << x.host_link_mbit;
    out << "}";
    first = false;
  }
  out << "\n  ],\n  \"skipped\": [";
  first = true;
  for (auto& s : r.skipped) {
    out << (first ? "\n" : ",\n") << "    {\"cell\": \""
        << json_escape(s.c.label()) << "\", \"reason\": \""
        << json_escape(s.reason) << "\"}";
    first = false;
  }
  for (auto& x : r.results) {
    if (x.ok)
      continue;
    out << (first ? "\n" : ",\n") << "    {\"cell\": \""
        << json_escape(x.c.label()) << "\", \"reason\": \"failed: "
        << json_escape(x.error) << "\"}";
    first = false;
  }
  // The Python rows: a sanity figure, each row's rate also over the
  // Python socket round trip's.
  out << "\n  ],\n  \"python\": [";
  first = true;
  double socket_rate = 0;
  for (auto& x : r.python)
    if (x.client == "python-socket" && x.error.empty())
      socket_rate = x.msgs_per_s;
  for (auto& x : r.python) {
    out << (first ? "\n" : ",\n") << "    {\"client\": \""
        << json_escape(x.client) << "\", \"payload_bytes\": "
        << x.payload_bytes;
    if (!x.error.empty()) {
      out << ", \"error\": \"" << json_escape(x.error) << "\"}";
      first = false;
      continue;
    }
    out << ", \"msgs_per_s\": " << json_number(x.msgs_per_s)
        << ", \"p50_us\": " << json_number(x.p50_us)
        << ", \"p99_us\": " << json_number(x.p99_us)
        << ", \"ratio_to_socket\": ";
    if (socket_rate > 0)
      out << json_number(x.msgs_per_s / socket_rate);
    else
      out << "null";
    out << ", \"round_msgs_per_s\": [";
    for (size_t i = 0; i < x.round_msgs_per_s.size(); ++i)
      out << (i ? ", " : "") << json_number(x.round_msgs_per_s[i]);
    out << "]}";
    first = false;
  }
  out << "\n  ],\n  \"load\": [";
  write_load_json(out, r.load);
  out << "\n  ],\n  \"entities\": [";
  write_entity_json(out, r.entities);
  // Every check, met or missed, failed rows' included: the report
  // generator (report.py) reads them from here.
  out << "\n  ],\n  \"targets\": [";
  first = true;
  for (auto& t : check_targets(r)) {
    out << (first ? "\n" : ",\n") << "    {\"what\": \"" << json_escape(t.what)
        << "\", \"row\": \"" << json_escape(t.row) << "\", \"figure\": \""
        << json_escape(t.figure) << "\", \"met\": " << (t.met ? "true" : "false");
    if (!t.bound.empty())
      out << ", \"bound\": \"" << json_escape(t.bound) << "\"";
    out << "}";
    first = false;
  }
  out << "\n  ]\n}\n";
  return static_cast<bool>(out);
}

bool write_plot(const report& r, const std::string& path) {
  // One series per (transport, family, payload type) of oneway rows, plus
  // the memcpy floor; one panel per transport.
  using series_key = std::tuple<transport, std::string, payload_type>;
  std::map<series_key, std::vector<std::pair<uint64_t, double>>> series;
  for (auto& x : r.results)
    if (x.ok && x.c.pat == pattern::oneway && x.mb_per_s > 0
        && x.c.type != payload_type::record && x.c.family != memcpy_limit)
      series[{x.c.tr, x.c.family, x.c.type}].emplace_back(x.c.size, x.mb_per_s);
  if (series.empty()) {
    std::cerr << "ferry-bench: nothing to plot\n";
    return false;
  }
  auto dir = std::string{"/tmp/ferry-bench-plot-"} + std::to_string(getpid());
  if (std::system(("mkdir -p " + dir).c_str()) != 0) {
    std::cerr << "ferry-bench: cannot create " << dir << "\n";
    return false;
  }
  auto data = dir + "/data.txt";
  std::ofstream out{data};
  std::map<transport, std::vector<std::pair<int, std::string>>> panels;
  int index = 0;
  for (auto& [key, points] : series) {
    auto& [tr, family, type] = key;
    out << "# " << to_string(tr) << " " << family << " " << to_string(type)
        << "\n";
    for (auto& [size, mbps] : points)
      out << size << " " << mbps << "\n";
    out << "\n\n";
    std::string title = family;
    if (type != payload_type::bytes) {
      title += ' ';
      title += to_string(type);
    }
    panels[tr].emplace_back(index++, title);
  }
  out << "# memcpy\n";
  for (auto& [size, us] : r.memcpy_us)
    if (us > 0)
      out << size << " " << static_cast<double>(size) / us << "\n";
  out << "\n\n";
  int memcpy_index = index;
  out.close();
  auto script = dir + "/plot.gp";
  std::ofstream gp{script};
  gp << "set terminal pngcairo noenhanced size " << 640 * panels.size()
     << ",640 font 'sans,9'\n"
     << "set output '" << path << "'\n"
     << "set logscale xy\n"
     << "set grid\n"
     << "set key below font 'sans,8'\n"
     << "set xlabel 'payload size (bytes)'\n"
     << "set ylabel 'delivered MB/s (oneway, windowed; bytes and shared_array)'\n"
     << "set xtics ('64B' 64, '4K' 4096, '64K' 65536, '1M' 1048576, "
        "'64M' 67108864, '1G' 1073741824)\n"
     << "set multiplot layout 1," << panels.size() << " title 'ferry-bench ("
     << r.mode << ", " << r.machine.date << "): throughput against payload size'\n";
  for (auto& [tr, lines] : panels) {
    gp << "set title '" << to_string(tr) << "'\n";
    gp << "plot ";
    for (auto& [i, title] : lines) {
      auto style = title == raw_caf         ? "lw 3 dt 2 lc 'black' "
                   : title == raw_caf_tuned ? "lw 3 dt 4 lc 'gray40' "
                   : title == socket_limit || title == tls_socket_limit
                     ? "lw 3 dt 3 lc 'red' "
                                            : "lw 1.5 ";
      gp << "'" << data << "' index " << i << " using 1:2 with linespoints "
         << style << "title '" << title << "', ";
    }
    gp << "'" << data << "' index " << memcpy_index
       << " using 1:2 with lines lc 'dark-gray' dt 3 lw 2"
       << " title 'memcpy (warm, one copy)'\n";
  }
  gp << "unset multiplot\n";
  gp.close();
  return run_gnuplot(script, data, dir);
}

} // namespace ferry::bench
