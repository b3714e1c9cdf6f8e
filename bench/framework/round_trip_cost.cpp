// What one request/response between two processes costs, ferry against
// plain CAF: allocations and (under callgrind) instructions per round trip,
// on each side. round_trip_cost.py runs it; see the README's Profiling.
//
//   ferry_round_trip_cost --serve --impl=I [--family=F]
//       starts the receiving side, prints "port <N> store <name>", answers
//       until stdin closes
//   ferry_round_trip_cost --connect=N --store=S --impl=I [--family=F]
//       [--size=B] [--round-trips=K]
//       makes K round trips and prints one JSON object
//
// I is `raw-caf` (CAF's defaults), `raw-caf-tuned` (CAF given a ferry
// node's scheduler settings and the middleman settings of
// support/ferry_caf_settings.hpp) or `ferry` (two ferry nodes
// sharing one host store, family F, cereal.binary by default). A request
// carries B bytes (64 by default; `std::vector<char>` for plain CAF,
// `std::vector<std::byte>` for ferry), the reply a `uint64_t`.
//
// The measured window: after 200 warm-up round trips, the client sends the
// mark 1 (a `uint64_t` request); the server zeroes callgrind's counters
// (CALLGRIND_ZERO_STATS, a no-op outside valgrind) and notes its allocation
// count, the client does the same; then K round trips; then the client
// dumps its counters (CALLGRIND_DUMP_STATS_AT) and sends the mark 2, on
// which the server dumps its own and answers with its allocations since
// mark 1. So each side's window holds the K round trips, everything its
// threads did meanwhile (CAF's scheduler polling included) and at most one
// mark's processing. Allocations are `operator new` calls of all threads
// (alloc_counter.hpp). Single-threaded driver; the echo actor runs on
// CAF's scheduler.
#include "alloc_counter.hpp"
#include "support/caf_connect.hpp"
#include "support/ferry_caf_settings.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/node_config.hpp"
#include "ferry/store/object_store.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <valgrind/callgrind.h>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace ferry::bench;

namespace {

using namespace std::chrono_literals;

struct options {
  bool serve = false;
  uint16_t port = 0;
  std::string impl = "ferry";
  std::string family = "cereal.binary";
  std::string store;
  size_t size = 64;
  int64_t round_trips = 1000;
};

std::optional<options> parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* name) -> std::optional<std::string> {
      auto prefix = std::string{name} + "=";
      if (arg.rfind(prefix, 0) == 0)
        return arg.substr(prefix.size());
      return std::nullopt;
    };
    if (arg == "--serve")
      o.serve = true;
    else if (auto v = value("--connect"))
      o.port = static_cast<uint16_t>(std::atoi(v->c_str()));
    else if (auto v = value("--impl"))
      o.impl = *v;
    else if (auto v = value("--family"))
      o.family = *v;
    else if (auto v = value("--store"))
      o.store = *v;
    else if (auto v = value("--size"))
      o.size = static_cast<size_t>(std::atoll(v->c_str()));
    else if (auto v = value("--round-trips"))
      o.round_trips = std::atoll(v->c_str());
    else
      return std::nullopt;
  }
  if (o.impl != "raw-caf" && o.impl != "raw-caf-tuned" && o.impl != "ferry")
    return std::nullopt;
  if (!o.serve && (o.port == 0 || o.round_trips <= 0))
    return std::nullopt;
  return o;
}

/// Allocations at mark 1 (server side).
uint64_t allocations_at_mark = 0;

/// Answers a request with its size, a mark with the server's figures.
caf::behavior echo(caf::event_based_actor*) {
  return {
    [](const std::vector<std::byte>& xs) -> uint64_t { return xs.size(); },
    [](const std::vector<char>& xs) -> uint64_t { return xs.size(); },
    [](uint64_t mark) -> uint64_t {
      if (mark == 1) {
        CALLGRIND_ZERO_STATS;
        allocations_at_mark = allocations();
        return 0;
      }
      auto n = allocations() - allocations_at_mark;
      CALLGRIND_DUMP_STATS_AT("server round trips");
      return n;
    },
  };
}

/// One actor system, plain CAF or a ferry node.
class endpoint {
public:
  endpoint(const options& o, const char* name) {
    if (o.impl == "ferry") {
      ncfg_.node_name = name;
      ncfg_.store_name = o.store;
      ncfg_.store_capacity = 64 << 20;
      ncfg_.default_link.serializers = {o.family};
      ncfg_.default_link.deserializers = {o.family};
      auto n = ferry::node::start(ncfg_);
      if (!n)
        throw std::runtime_error("cannot start a ferry node: "
                                 + ferry::render(n.error()));
      node_ = std::move(*n);
      return;
    }
    ccfg_.load<caf::io::middleman>();
    if (o.impl == "raw-caf-tuned")
      apply_ferry_caf_settings(ccfg_);
    sys_ = std::make_unique<caf::actor_system>(ccfg_);
  }

  caf::actor_system& system() {
    return node_ ? node_->system() : *sys_;
  }

  uint16_t publish(const caf::actor& whom) {
    if (node_) {
      auto port = node_->publish(whom);
      if (!port)
        throw std::runtime_error("publish: " + ferry::render(port.error()));
      return *port;
    }
    auto port = sys_->middleman().publish(whom, 0, "127.0.0.1");
    if (!port)
      throw std::runtime_error("publish: " + sys_->render(port.error()));
    return *port;
  }

  caf::actor remote(uint16_t port) {
    if (node_) {
      auto peer = node_->remote_actor("127.0.0.1", port);
      if (!peer)
        throw std::runtime_error("remote_actor: "
                                 + ferry::render(peer.error()));
      return *peer;
    }
    auto peer = connect_caf(*sys_, "127.0.0.1", port);
    if (!peer)
      throw std::runtime_error("remote_actor: " + sys_->render(peer.error()));
    return *peer;
  }

private:
  ferry::node_config ncfg_;
  std::unique_ptr<ferry::node> node_;
  caf::actor_system_config ccfg_;
  std::unique_ptr<caf::actor_system> sys_;
};

uint64_t request(caf::scoped_actor& self, const caf::actor& dest,
                 const caf::message& msg) {
  uint64_t result = 0;
  self->request(dest, 60s, msg)
    .receive([&](uint64_t x) { result = x; },
             [&](const caf::error& err) {
               throw std::runtime_error(caf::to_string(err));
             });
  return result;
}

int serve(options o) {
  o.store = "ferry-round-trip-cost-" + std::to_string(getpid());
  int rc = 0;
  {
    endpoint ep{o, "cost-server"};
    auto e = ep.system().spawn(echo);
    std::cout << "port " << ep.publish(e) << " store " << o.store
              << std::endl;
    std::string line;
    while (std::getline(std::cin, line)) {
      // Nothing to read: stdin closing ends the server.
    }
    caf::anon_send_exit(e, caf::exit_reason::user_shutdown);
  }
  if (o.impl == "ferry")
    static_cast<void>(ferry::store::object_store::remove(o.store));
  return rc;
}

int connect(const options& o) {
  endpoint ep{o, "cost-client"};
  auto dest = ep.remote(o.port);
  caf::scoped_actor self{ep.system()};
  auto msg = o.impl == "ferry"
               ? caf::make_message(std::vector<std::byte>(o.size, std::byte{7}))
               : caf::make_message(std::vector<char>(o.size, 7));
  for (int i = 0; i < 200; ++i)
    request(self, dest, msg);
  request(self, dest, caf::make_message(uint64_t{1}));
  CALLGRIND_ZERO_STATS;
  auto before = allocations();
  for (int64_t i = 0; i < o.round_trips; ++i)
    request(self, dest, msg);
  auto client = allocations() - before;
  CALLGRIND_DUMP_STATS_AT("client round trips");
  auto server = request(self, dest, caf::make_message(uint64_t{2}));
  std::cout << "{\"impl\": \"" << o.impl << "\", \"family\": \""
            << (o.impl == "ferry" ? o.family : std::string{"caf"})
            << "\", \"payload_bytes\": " << o.size
            << ", \"round_trips\": " << o.round_trips
            << ", \"client_allocations\": " << client
            << ", \"server_allocations\": " << server << "}" << std::endl;
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  auto o = parse(argc, argv);
  if (!o) {
    std::cerr << "usage: ferry_round_trip_cost --serve --impl=I [--family=F]\n"
                 "       ferry_round_trip_cost --connect=PORT --store=NAME "
                 "--impl=I [--family=F] [--size=B] [--round-trips=K]\n"
                 "I: raw-caf, raw-caf-tuned, ferry\n";
    return 2;
  }
  try {
    return o->serve ? serve(*o) : connect(*o);
  } catch (const std::exception& e) {
    std::cerr << "ferry_round_trip_cost: " << e.what() << "\n";
    return 1;
  }
}
