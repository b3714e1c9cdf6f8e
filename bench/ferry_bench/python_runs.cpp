#include "python_runs.hpp"

#include "child.hpp"

#include "ferry/test/child_process.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <unistd.h>

namespace ferry::bench {

namespace {

constexpr const char* python = "/usr/bin/python3";

/// The number after `"key": ` in a line of JSON, or 0.
double number_after(const std::string& line, const std::string& key) {
  auto at = line.find("\"" + key + "\": ");
  return at == std::string::npos
           ? 0
           : std::strtod(line.c_str() + at + key.size() + 4, nullptr);
}

/// The numbers of the array after `"key": [`.
std::vector<double> numbers_after(const std::string& line,
                                  const std::string& key) {
  std::vector<double> out;
  auto at = line.find("\"" + key + "\": [");
  if (at == std::string::npos)
    return out;
  const char* p = line.c_str() + at + key.size() + 5;
  while (*p != ']' && *p != '\0') {
    char* end = nullptr;
    out.push_back(std::strtod(p, &end));
    if (end == p)
      break;
    p = end;
    while (*p == ',' || *p == ' ')
      ++p;
  }
  return out;
}

python_row run_client(const std::string& mode, uint16_t port,
                      const bench_env& env, double seconds, int rounds) {
  python_row row;
  row.client = "python-" + mode;
  test::child_process client{
    python,
    {FERRY_SOURCE_DIR "/bench/python/rr_client.py", mode, env.peer_address,
     std::to_string(port), "--size", std::to_string(row.payload_bytes),
     "--seconds", std::to_string(seconds), "--repeats",
     std::to_string(rounds), "--ferry-path",
     FERRY_SOURCE_DIR "/framework/python"}};
  auto line = client.read_line(
    std::chrono::seconds{60 + static_cast<int>(seconds)});
  if (!line) {
    row.error = "the Python client printed nothing";
    return row;
  }
  if (auto at = line->find("\"error\": \""); at != std::string::npos) {
    row.error = line->substr(at + 10, line->size() - at - 12);
    return row;
  }
  row.round_msgs_per_s = numbers_after(*line, "round_msgs_per_s");
  if (row.round_msgs_per_s.empty()) {
    row.error = "unreadable client output: " + *line;
    return row;
  }
  auto sorted = row.round_msgs_per_s;
  std::sort(sorted.begin(), sorted.end());
  row.msgs_per_s = sorted[sorted.size() / 2];
  row.p50_us = number_after(*line, "p50_us");
  row.p99_us = number_after(*line, "p99_us");
  return row;
}

python_row measure(const std::string& mode, std::vector<std::string> args,
                   const bench_env& env, double seconds, int rounds) {
  try {
    child peer{args};
    auto port = peer.wait_for("port ", std::chrono::seconds{60});
    if (!port)
      throw std::runtime_error("the " + mode + " peer did not start");
    return run_client(mode, static_cast<uint16_t>(std::stoi(*port)), env,
                      seconds, rounds);
  } catch (std::exception& e) {
    python_row row;
    row.client = "python-" + mode;
    row.error = e.what();
    return row;
  }
}

template <class T, class U>
bool allows(const std::vector<T>& filter, const U& value) {
  return filter.empty()
         || std::find(filter.begin(), filter.end(), value) != filter.end();
}

} // namespace

bool python_selected(const options& opts) {
  return allows(opts.transports, "tcp") && allows(opts.families, "python")
         && allows(opts.patterns, "pingpong") && allows(opts.payloads, 64)
         && allows(opts.types, "bytes");
}

std::vector<python_row> measure_python(const bench_env& env, double seconds,
                                       int rounds) {
  std::string missing;
  if (::access(python, X_OK) != 0)
    missing = "no " + std::string{python} + " (Debian package python3)";
  if (missing.empty()) {
    test::child_process probe{python, {"-c", "import msgpack; print('ok')"}};
    if (probe.read_line(std::chrono::seconds{30}) != std::optional<std::string>{"ok"})
      missing = "python3 cannot import msgpack (Debian package "
                "python3-msgpack)";
  }
  if (!missing.empty()) {
    std::vector<python_row> rows(2);
    rows[0].client = "python-ferry";
    rows[1].client = "python-socket";
    rows[0].error = rows[1].error = missing;
    return rows;
  }
  return {
    measure("ferry",
            {"--peer=ferry", "--address=" + env.peer_address,
             "--ferry.node-name=bench-python-peer",
             "--ferry.store.name=" + env.tcp_store_name,
             "--ferry.store.capacity=" + std::to_string(env.tcp_store_capacity),
             "--ferry.link.serializers=[\"msgpack\"]",
             "--ferry.link.deserializers=[\"msgpack\"]"},
            env, seconds, rounds),
    measure("socket", {"--peer=socket", "--address=" + env.peer_address}, env,
            seconds, rounds),
  };
}

} // namespace ferry::bench
