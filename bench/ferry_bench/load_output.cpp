// The load program's output: its sets as JSON, as a table on stdout, and
// p99 latency against offered rate as a gnuplot picture (output.hpp).
#include "output.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <unistd.h>

namespace ferry::bench {

namespace {

std::string set_label(const load_set& s) {
  return s.transport + " " + s.system
         + (s.family.empty() ? std::string{} : " " + s.family);
}

} // namespace

void write_load_json(std::ostream& out, const std::vector<load_set>& sets) {
  bool first = true;
  for (auto& s : sets) {
    out << (first ? "\n" : ",\n") << "    {\"transport\": \"" << s.transport
        << "\", \"system\": \"" << s.system << "\", \"family\": \""
        << json_escape(s.family) << "\", \"clients\": " << s.clients
        << ", \"held_rate\": " << json_number(s.held_rate)
        << ", \"p99_bound_us\": " << json_number(load_p99_bound_us);
    if (!s.error.empty())
      out << ", \"error\": \"" << json_escape(s.error) << "\"";
    out << ", \"steps\": [";
    for (size_t i = 0; i < s.steps.size(); ++i) {
      auto& x = s.steps[i];
      out << (i ? ", " : "") << "{\"offered\": " << json_number(x.offered)
          << ", \"achieved\": " << json_number(x.achieved)
          << ", \"sent\": " << x.sent << ", \"ok\": " << x.ok
          << ", \"errors\": " << x.errors
          << ", \"p50_us\": " << json_number(x.p50_us)
          << ", \"p99_us\": " << json_number(x.p99_us)
          << ", \"p999_us\": " << json_number(x.p999_us)
          << ", \"max_us\": " << json_number(x.max_us)
          << ", \"server_cpu_us\": " << json_number(x.server_cpu_us) << "}";
    }
    out << "]}";
    first = false;
  }
}

void print_load(const std::vector<load_set>& sets) {
  std::cout << "\nload: offered requests/s (all clients), answered/s, "
               "errors, latency from each request's scheduled time (µs)\n";
  for (auto& s : sets) {
    std::cout << "  " << set_label(s) << " (" << s.clients << " clients): ";
    if (!s.error.empty()) {
      std::cout << "failed: " << s.error << "\n";
      continue;
    }
    std::cout << "held " << fixed(s.held_rate, 0) << "/s at p99 <= "
              << fixed(load_p99_bound_us / 1e3, 0) << " ms\n";
    for (auto& x : s.steps)
      std::cout << "    " << fixed(x.offered, 0) << "/s: "
                << fixed(x.achieved, 0) << "/s, " << x.errors
                << " errors, p50 " << fixed(x.p50_us, 0) << ", p99 "
                << fixed(x.p99_us, 0) << ", p99.9 " << fixed(x.p999_us, 0)
                << ", max " << fixed(x.max_us, 0) << ", server CPU "
                << (x.server_cpu_us < 0 ? std::string{"?"}
                                        : fixed(x.server_cpu_us, 1))
                << " µs/request\n";
  }
}

bool write_load_plot(const report& r, const std::string& path) {
  auto dir = std::string{"/tmp/ferry-bench-load-plot-"}
             + std::to_string(getpid());
  if (std::system(("mkdir -p " + dir).c_str()) != 0) {
    std::cerr << "ferry-bench: cannot create " << dir << "\n";
    return false;
  }
  auto data = dir + "/data.txt";
  std::ofstream out{data};
  std::vector<std::string> titles;
  for (auto& s : r.load) {
    if (s.steps.empty())
      continue;
    out << "# " << set_label(s) << "\n";
    for (auto& x : s.steps)
      out << x.offered << " " << x.p99_us / 1e3 << "\n";
    out << "\n\n";
    titles.push_back(set_label(s));
  }
  out.close();
  if (titles.empty()) {
    std::cerr << "ferry-bench: no load step to plot\n";
    return false;
  }
  auto script = dir + "/plot.gp";
  std::ofstream gp{script};
  gp << "set terminal pngcairo noenhanced size 900,600 font 'sans,9'\n"
     << "set output '" << path << "'\n"
     << "set logscale xy\nset grid\nset key top left font 'sans,8'\n"
     << "set xlabel 'offered rate (requests/s, all clients)'\n"
     << "set ylabel 'p99 latency from the scheduled time (ms)'\n"
     << "set title 'ferry-bench --load (" << r.mode << ", "
     << r.machine.date << "): p99 latency against offered rate'\n"
     << "plot ";
  for (size_t i = 0; i < titles.size(); ++i) {
    auto caf = titles[i].find("raw-caf") != std::string::npos
               || titles[i].find("socket") != std::string::npos;
    gp << "'" << data << "' index " << i << " using 1:2 with linespoints "
       << (caf ? "lw 3 dt 2 " : "lw 1.5 ") << "title '" << titles[i]
       << "', ";
  }
  gp << load_p99_bound_us / 1e3
     << " with lines lc 'red' dt 3 lw 2 title 'p99 bound (10 ms)'\n";
  gp.close();
  return run_gnuplot(script, data, dir);
}

} // namespace ferry::bench
