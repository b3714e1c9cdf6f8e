// The broadcast rows (see broadcast_runs.hpp).
//
// What is timed: from sending the request(s) to the last answer arriving at
// the driver, on the driver's steady clock; the object is made and sealed
// before the clock starts, and the requesting actor exists before the first
// run. A single run and a broadcast run use fresh objects of their own, so
// neither finds copies the other left on a receiver; each object's handles
// go as soon as its answers are in. The two kinds of run take turns at going
// first, so whatever the first leaves behind (fresh pages, a busy cache)
// does not always land on the same kind.
//
// What the owner served is read from the sender's links
// (`bytes_pulled_by_peer`: the frame bytes each receiver pulled from this
// node), around the broadcast runs only; what the receivers served each
// other from their `bytes_relayed_by_peer` (peer command `relayed`). The
// CPU time of the four processes (every live thread) is read just before the
// clock starts and just after it stops. The warm-up run counts for none of
// these.
#include "broadcast_runs.hpp"

#include "child.hpp"
#include "driver.hpp"
#include "emulated_hosts.hpp"
#include "ferry_parts.hpp"
#include "machine.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/store/object_store.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace ferry::bench {

namespace {

using clock_type = std::chrono::steady_clock;

constexpr uint64_t MiB = uint64_t{1} << 20;

/// A receiving node: a ferry peer process with a store of its own.
struct receiver {
  std::string node_name;
  std::string store_name;
  std::unique_ptr<child> process;
  /// Where its sink listens.
  std::string address = "127.0.0.1";
  uint16_t port = 0;
  /// The sender's proxy of the receiver's sink.
  caf::actor sink;
};

/// The sender node and its three receivers, for one row: over loopback, or
/// with `hosts` each receiver on host i (1-based) and the sender on host 0,
/// where the calling thread must already live. Throws std::runtime_error
/// from the constructor when they cannot be set up.
class broadcast_nodes {
public:
  broadcast_nodes(const cell& c, const bench_env& env,
                  const emulated_hosts* hosts)
    : size_(c.size) {
    for (int i = 1; i <= broadcast_receivers; ++i) {
      auto& r = receivers_[static_cast<size_t>(i - 1)];
      r.node_name = "bench-broadcast-r" + std::to_string(i);
      r.store_name = broadcast_store_name(env.tcp_store_name, i);
      if (hosts != nullptr)
        r.address = hosts->address(i);
      // A store of the same name left by an earlier row may have another
      // size: start afresh.
      static_cast<void>(store::object_store::remove(r.store_name));
    }
    register_ferry_types(cfg_);
    read_caf_application_ini(cfg_);
    cfg_.node_name = "bench-broadcast";
    cfg_.store_name = env.store_name;
    cfg_.store_capacity = env.store_capacity;
    cfg_.store_prefault = true;
    cfg_.default_link.serializers = {c.family};
    cfg_.default_link.deserializers = {c.family};
    auto n = ferry::node::start(cfg_);
    if (!n)
      throw std::runtime_error("cannot start a ferry node: "
                               + ferry::render(n.error()));
    node_ = std::move(*n);
    // Each receiver's store holds two objects (the one it is pulling and
    // the one before, which its sink or a receiver still pulling from it
    // may hold a moment longer) plus room for small frames; on top, the eighth of a store that copies
    // landed ahead of their delivery may take (as the tcp peers' store in
    // main.cpp). Prefaulted: the rows measure warm stores.
    auto needed = 2 * size_ + 16 * MiB;
    auto capacity = needed + needed / 7;
    auto family_list = "[\"" + c.family + "\"]";
    // Started together, so their stores are prefaulted side by side.
    for (size_t i = 0; i < receivers_.size(); ++i) {
      auto& r = receivers_[i];
      std::vector<std::string> args{"--peer=ferry"};
      if (hosts != nullptr)
        args.push_back("--netns="
                       + hosts->namespace_path(static_cast<int>(i) + 1));
      args.insert(args.end(), {"--address=" + r.address,
        "--ferry.node-name=" + r.node_name,
        "--ferry.store.name=" + r.store_name,
        "--ferry.store.capacity=" + std::to_string(capacity),
        "--ferry.store.prefault", "--ferry.link.serializers=" + family_list,
        "--ferry.link.deserializers=" + family_list});
      r.process = std::make_unique<child>(args);
    }
    for (auto& r : receivers_) {
      auto port = r.process->wait_for("port ", std::chrono::seconds{120});
      if (!port)
        throw std::runtime_error(r.node_name + " did not start");
      r.port = static_cast<uint16_t>(std::stoi(*port));
    }
    // The receivers link to each other: 2 to 1, 3 to 1 and 2.
    for (size_t i = 1; i < receivers_.size(); ++i)
      for (size_t j = 0; j < i; ++j) {
        auto answer = receivers_[i].process->ask(
          "connect " + receivers_[j].address + " "
            + std::to_string(receivers_[j].port),
          "");
        if (!answer || *answer != "ok")
          throw std::runtime_error(receivers_[i].node_name + " cannot link to "
                                   + receivers_[j].node_name + ": "
                                   + answer.value_or("no answer"));
      }
    for (auto& r : receivers_) {
      auto proxy = node_->remote_actor(r.address, r.port);
      if (!proxy)
        throw std::runtime_error("cannot connect to " + r.node_name + ": "
                                 + ferry::render(proxy.error()));
      r.sink = *proxy;
      auto st = node_->stats(r.node_name);
      if (!st)
        throw std::runtime_error("no link to " + r.node_name);
      if (st->same_host)
        throw std::runtime_error("the link to " + r.node_name
                                 + " shares the store; the row would not "
                                   "cross hosts");
    }
  }

  broadcast_nodes(const broadcast_nodes&) = delete;
  broadcast_nodes& operator=(const broadcast_nodes&) = delete;

  /// Stops the sender node, then the receivers (closing their stdin), and
  /// removes the receivers' stores.
  ~broadcast_nodes() {
    for (auto& r : receivers_)
      r.sink = nullptr;
    node_.reset();
    for (auto& r : receivers_)
      r.process.reset();
    for (auto& r : receivers_)
      static_cast<void>(store::object_store::remove(r.store_name));
  }

  ferry::node& sender() { return *node_; }

  std::array<receiver, broadcast_receivers>& receivers() { return receivers_; }

  /// Returns the frame bytes the receivers pulled from the sender so far.
  std::optional<uint64_t> owner_served() const {
    uint64_t total = 0;
    for (auto& r : receivers_) {
      auto st = node_->stats(r.node_name);
      if (!st)
        return std::nullopt;
      total += st->bytes_pulled_by_peer;
    }
    return total;
  }

  /// Returns the bytes the receivers pulled from each other so far.
  std::optional<uint64_t> relayed() {
    uint64_t total = 0;
    for (auto& r : receivers_) {
      auto answer = r.process->ask("relayed", "relayed ");
      if (!answer)
        return std::nullopt;
      total += std::stoull(*answer);
    }
    return total;
  }

  /// Returns the CPU time the four processes have run so far (ns).
  uint64_t cpu_ns() const {
    auto total = process_cpu_ns(static_cast<int>(getpid()));
    for (auto& r : receivers_)
      total += process_cpu_ns(static_cast<int>(r.process->pid()));
    return total;
  }

  /// Resets every receiver's sink and peak memory; false if one did not
  /// answer.
  bool reset() {
    for (auto& r : receivers_)
      if (!r.process->ask("reset 1", "ok"))
        return false;
    return true;
  }

  /// Returns the largest peak memory of the receivers since the reset
  /// (MiB, without their stores' pages); negative when unknown.
  double peak_rss() {
    double result = -1;
    for (auto& r : receivers_)
      if (auto answer = r.process->ask("rss", "rss "))
        result = std::max(result, std::stod(*answer));
    return result;
  }

private:
  uint64_t size_;
  ferry::node_config cfg_;
  std::unique_ptr<ferry::node> node_;
  std::array<receiver, broadcast_receivers> receivers_;
};

double micros(clock_type::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

/// What sending one object took.
struct timed_send {
  /// Until the last answer arrived (µs); negative on failure.
  double us = -1;
  /// CPU time of the four processes meanwhile (ns).
  uint64_t cpu_ns = 0;
};

/// Sends a fresh object of `size` bytes as a request to each of `dests` at
/// once and returns the time until the last answer arrived (`error` says
/// why it failed).
timed_send send_to_all(broadcast_nodes& nodes, caf::scoped_actor& self,
                       const std::vector<caf::actor>& dests, uint64_t size,
                       double timeout_seconds, std::string& error) {
  timed_send result;
  auto arr = make_filled_array(nodes.sender(), size, error);
  if (!arr)
    return result;
  auto msg = caf::make_message(std::move(*arr));
  auto timeout = std::chrono::duration_cast<caf::timespan>(
    std::chrono::duration<double>(timeout_seconds));
  auto answered = 0;
  auto cpu0 = nodes.cpu_ns();
  auto t0 = clock_type::now();
  using handle = decltype(self->request(dests.front(), timeout, msg));
  std::vector<handle> pending;
  pending.reserve(dests.size());
  for (auto& dest : dests)
    pending.push_back(self->request(dest, timeout, msg));
  // Each handle waits for its own answer; the others wait in the mailbox.
  for (auto& h : pending)
    h.receive([&](uint64_t) { ++answered; },
              [&](caf::error& err) {
                if (error.empty())
                  error = ferry::render(err);
              });
  auto t1 = clock_type::now();
  auto cpu1 = nodes.cpu_ns();
  if (answered != static_cast<int>(dests.size())) {
    if (error.empty())
      error = "no answer";
    return result;
  }
  result.us = micros(t1 - t0);
  result.cpu_ns = cpu1 > cpu0 ? cpu1 - cpu0 : 0;
  return result;
}

} // namespace

std::string broadcast_store_name(const std::string& tcp_store_name, int i) {
  return tcp_store_name + "-r" + std::to_string(i);
}

measurement measure_broadcast(const cell& c, const run_params& p,
                              const bench_env& env) {
  measurement m;
  try {
    // netns rows: four hosts, the sender (this thread, and the node's
    // threads it starts) on host 0 until the nodes are gone.
    std::unique_ptr<emulated_hosts> hosts;
    std::optional<scoped_network_namespace> on_host;
    if (c.tr == transport::netns) {
      hosts = std::make_unique<emulated_hosts>(1 + broadcast_receivers,
                                               env.host_link_mbit);
      on_host.emplace(hosts->namespace_path(0));
    }
    broadcast_nodes nodes{c, env, hosts.get()};
    if (!nodes.reset()) {
      m.error = "a receiver did not answer a reset";
      return m;
    }
    auto& rs = nodes.receivers();
    std::vector<caf::actor> first_only{rs[0].sink};
    std::vector<caf::actor> all;
    for (auto& r : rs)
      all.push_back(r.sink);
    caf::scoped_actor self{nodes.sender().system()};
    std::vector<double> singles;
    std::vector<double> broadcasts;
    uint64_t owner_bytes = 0;
    uint64_t relayed_bytes = 0;
    uint64_t single_cpu = 0;
    uint64_t broadcast_cpu = 0;
    for (int i = 0; i <= p.handoff_runs; ++i) {
      bool timed = i > 0; // the first run warms up
      auto single = [&] {
        auto sent = send_to_all(nodes, self, first_only, c.size,
                                p.timeout_seconds, m.error);
        if (sent.us >= 0 && timed) {
          singles.push_back(sent.us);
          single_cpu += sent.cpu_ns;
        }
        return sent.us >= 0;
      };
      auto broadcast = [&] {
        auto served_before = nodes.owner_served();
        auto relayed_before = nodes.relayed();
        auto sent = send_to_all(nodes, self, all, c.size, p.timeout_seconds,
                                m.error);
        if (sent.us < 0)
          return false;
        auto served_after = nodes.owner_served();
        auto relayed_after = nodes.relayed();
        if (!served_before || !served_after || !relayed_before
            || !relayed_after) {
          m.error = "cannot read the links' counters";
          return false;
        }
        if (timed) {
          broadcasts.push_back(sent.us);
          broadcast_cpu += sent.cpu_ns;
          owner_bytes += *served_after - *served_before;
          relayed_bytes += *relayed_after - *relayed_before;
        }
        return true;
      };
      bool ok = i % 2 == 0 ? single() && broadcast() : broadcast() && single();
      if (!ok) {
        if (m.error.empty())
          m.error = "no answer";
        return m;
      }
    }
    auto runs = static_cast<double>(broadcasts.size());
    m.ok = true;
    m.messages = broadcasts.size();
    m.p50_us = median(broadcasts);
    m.p99_us = quantile(broadcasts, 0.99);
    for (auto t : broadcasts)
      m.seconds += t / 1e6;
    m.msgs_per_s = m.p50_us > 0 ? 1e6 / m.p50_us : 0;
    m.single_p50_us = median(singles);
    m.owner_copies = static_cast<double>(owner_bytes)
                     / (static_cast<double>(c.size) * runs);
    m.relayed_bytes = static_cast<double>(relayed_bytes) / runs;
    if (single_cpu > 0)
      m.cpu_ratio = static_cast<double>(broadcast_cpu)
                    / static_cast<double>(single_cpu);
    if (broadcast_cpu > 0 && m.seconds > 0)
      m.cores_busy = static_cast<double>(broadcast_cpu) / 1e9 / m.seconds;
    m.rss_mb = nodes.peak_rss();
  } catch (std::exception& e) {
    m.ok = false;
    m.error = e.what();
  }
  return m;
}

} // namespace ferry::bench
