// One member of the bridged cluster test (bridge_test.cpp): a ferry node
// whose default actor answers a string with "<node> heard <string>", a
// shared_array<double> with the hash of its elements (bridge_payload.hpp),
// and (handle, text) by asking the handle for text and answering what came
// back. It follows its links with `watch_nodes` from the start and serves
// line commands on stdin, each answered by exactly one line on stdout:
//   publish <address>             "published <port>"
//   connect <peer> <host> <port>  "connected <peer> <answer to hello>"
//       (the proxy of the default actor there is kept under <peer>)
//   send <peer> <seed> <n>        "hash <peer> <answer>": puts n elements
//       made with `seed` into this node's store and asks <peer> for their
//       hash; the array is dropped before the line is printed
//   stats <peer>                  "stats <peer> same_host=<0|1> pulled=<B>"
//       (B: bytes the peer pulled from this node)
//   relay <via> <target> <text>   "relayed <answer>": gives <via> this node's
//       proxy of <target> and <text>; <via> asks <target> through it
//   watch <peer>                  "watching <peer>" once one actor of this
//       node is linked to <peer>'s actor and another monitors it
//   events <count> <ms>           "events <event>; <event>...": every event
//       so far, once there are <count> or <ms> passed; an event is
//       "node-down <node> <reason>", "exit <peer> <reason>" (the linked
//       actor's exit message) or "down <peer> <reason>" (the monitor's)
//   store                         "store objects=<n> bytes_used=<B>
//       bytes_pinned=<B>" (this node's store, which no other process uses)
// A command that cannot be carried out prints "fail <what>". The program
// exits when stdin closes. Flags are ferry's and CAF's.
#include "bridge_payload.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/node_events.hpp"
#include "ferry/store/object_store.hpp"
#include "ferry/store/shared_array.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <condition_variable>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;

using f64_array = ferry::store::shared_array<double>;

/// The events the watcher, the linked actor and the monitor saw, in the
/// order they came. Thread-safe: actors add, the command loop waits.
class event_log {
public:
  void add(std::string event) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      events_.push_back(std::move(event));
    }
    cv_.notify_all();
  }

  /// Returns every event once there are `count` of them or `timeout` passed.
  std::vector<std::string> wait_for(size_t count,
                                    std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> guard{mtx_};
    cv_.wait_for(guard, timeout, [&] { return events_.size() >= count; });
    return events_;
  }

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  std::vector<std::string> events_;
};

caf::behavior member(caf::event_based_actor* self, std::string name) {
  return {
    [name](const std::string& text) { return name + " heard " + text; },
    [](const f64_array& xs) {
      return ferry::test::payload_hash({xs.data(), xs.size()});
    },
    [self](const caf::actor& whom,
           const std::string& text) -> caf::result<std::string> {
      auto answer = self->make_response_promise<std::string>();
      self->request(whom, 10s, text)
        .then([answer](const std::string& x) mutable { answer.deliver(x); },
              [answer](caf::error& err) mutable {
                answer.deliver(std::move(err));
              });
      return answer;
    },
  };
}

caf::behavior watcher(caf::event_based_actor*, std::shared_ptr<event_log> log) {
  return {
    [](const ferry::node_up&) {},
    [log](const ferry::node_down& x) {
      log->add("node-down " + x.node + " " + ferry::render(x.reason));
    },
  };
}

/// Links itself to `whom` and logs the exit message that ends it. Answers
/// an int (once linked).
caf::behavior linked(caf::event_based_actor* self, caf::actor whom,
                     std::string peer,
                     std::shared_ptr<event_log> log) {
  self->set_exit_handler([self, peer, log](caf::exit_msg& x) {
    log->add("exit " + peer + " " + ferry::render(x.reason));
    self->quit(x.reason);
  });
  self->link_to(whom);
  return {[](int32_t x) { return x; }};
}

/// Monitors `whom` and logs its down message. Answers an int (once
/// monitoring).
caf::behavior monitoring(caf::event_based_actor* self, caf::actor whom,
                         std::string peer, std::shared_ptr<event_log> log) {
  self->set_down_handler([self, peer, log](caf::down_msg& x) {
    log->add("down " + peer + " " + ferry::render(x.reason));
    self->quit();
  });
  self->monitor(whom);
  return {[](int32_t x) { return x; }};
}

/// The command loop's state: the node, its actors, the proxies by peer.
class member_program {
public:
  explicit member_program(ferry::node& n)
    : node_(n),
      me_(n.system().spawn(member, n.name())),
      watcher_(n.system().spawn(watcher, log_)) {
    node_.watch_nodes(watcher_);
  }

  ~member_program() {
    for (auto& whom : own_)
      caf::anon_send_exit(whom, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(me_, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(watcher_, caf::exit_reason::user_shutdown);
  }

  /// Carries out one command line; returns the line to print.
  std::string run(const std::string& line) {
    std::istringstream in{line};
    std::string command;
    in >> command;
    if (command == "publish") {
      std::string address;
      in >> address;
      auto port = node_.publish(me_, 0, address);
      if (!port)
        return "fail " + ferry::render(port.error());
      return "published " + std::to_string(*port);
    }
    if (command == "connect") {
      std::string peer;
      std::string host;
      uint16_t port = 0;
      in >> peer >> host >> port;
      return connect(peer, host, port);
    }
    if (command == "send") {
      std::string peer;
      uint64_t seed = 0;
      uint64_t n = 0;
      in >> peer >> seed >> n;
      return send(peer, seed, n);
    }
    if (command == "stats") {
      std::string peer;
      in >> peer;
      auto s = node_.stats(peer);
      if (!s)
        return "fail " + ferry::render(s.error());
      return "stats " + peer + " same_host=" + std::to_string(s->same_host)
             + " pulled=" + std::to_string(s->bytes_pulled_by_peer);
    }
    if (command == "relay") {
      std::string via;
      std::string target;
      std::string text;
      in >> via >> target >> text;
      return relay(via, target, text);
    }
    if (command == "watch") {
      std::string peer;
      in >> peer;
      return watch(peer);
    }
    if (command == "events") {
      size_t count = 0;
      int64_t ms = 0;
      in >> count >> ms;
      std::string result = "events";
      auto sep = " ";
      for (auto& event : log_->wait_for(count, std::chrono::milliseconds{ms})) {
        result.append(sep).append(event);
        sep = "; ";
      }
      return result;
    }
    if (command == "store")
      return store_line();
    return "fail unknown command: " + line;
  }

private:
  /// Sends a request from a fresh scoped actor; returns the answer.
  template <class Result, class... Ts>
  caf::expected<Result> ask(const caf::actor& whom, Ts&&... xs) {
    caf::scoped_actor self{node_.system()};
    caf::expected<Result> result{caf::error{}};
    self->request(whom, 60s, std::forward<Ts>(xs)...)
      .receive([&](Result& x) { result = std::move(x); },
               [&](caf::error& err) { result = std::move(err); });
    return result;
  }

  std::string connect(const std::string& peer, const std::string& host,
                      uint16_t port) {
    auto proxy = node_.remote_actor(host, port);
    if (!proxy)
      return "fail " + ferry::render(proxy.error());
    proxies_[peer] = *proxy;
    auto answer = ask<std::string>(*proxy, std::string{"hello"});
    if (!answer)
      return "fail " + ferry::render(answer.error());
    return "connected " + peer + " " + *answer;
  }

  std::string send(const std::string& peer, uint64_t seed, uint64_t n) {
    auto proxy = proxies_.find(peer);
    if (proxy == proxies_.end())
      return "fail no proxy of " + peer;
    auto* store = node_.store();
    if (store == nullptr)
      return "fail this node has no store";
    caf::expected<uint64_t> answer{caf::error{}};
    {
      auto builder = store->create(n * sizeof(double));
      if (!builder)
        return "fail " + ferry::render(builder.error());
      auto* xs = reinterpret_cast<double*>(builder->bytes().data());
      for (uint64_t i = 0; i < n; ++i)
        xs[i] = ferry::test::payload_element(seed, i);
      auto ref = builder->seal();
      if (!ref)
        return "fail " + ferry::render(ref.error());
      auto arr = f64_array::from_ref(std::move(*ref));
      if (!arr)
        return "fail " + ferry::render(arr.error());
      answer = ask<uint64_t>(proxy->second, std::move(*arr));
    }
    if (!answer)
      return "fail " + ferry::render(answer.error());
    return "hash " + peer + " " + std::to_string(*answer);
  }

  std::string relay(const std::string& via, const std::string& target,
                    const std::string& text) {
    auto by = proxies_.find(via);
    auto to = proxies_.find(target);
    if (by == proxies_.end() || to == proxies_.end())
      return "fail no proxy of " + via + " or " + target;
    auto answer = ask<std::string>(by->second, to->second, text);
    if (!answer)
      return "fail " + ferry::render(answer.error());
    return "relayed " + *answer;
  }

  std::string watch(const std::string& peer) {
    auto proxy = proxies_.find(peer);
    if (proxy == proxies_.end())
      return "fail no proxy of " + peer;
    auto& sys = node_.system();
    own_.push_back(sys.spawn(linked, proxy->second, peer, log_));
    own_.push_back(sys.spawn(monitoring, proxy->second, peer, log_));
    // Each answers only after its behavior was made: linked or monitoring.
    for (auto it = own_.end() - 2; it != own_.end(); ++it)
      if (auto ready = ask<int32_t>(*it, int32_t{1}); !ready)
        return "fail " + ferry::render(ready.error());
    return "watching " + peer;
  }

  std::string store_line() {
    auto* store = node_.store();
    if (store == nullptr)
      return "fail this node has no store";
    auto summary = store->memory_summary();
    if (!summary)
      return "fail " + ferry::render(summary.error());
    return "store objects=" + std::to_string(summary->objects.size())
           + " bytes_used=" + std::to_string(summary->bytes_used)
           + " bytes_pinned=" + std::to_string(summary->bytes_pinned);
  }

  ferry::node& node_;
  std::shared_ptr<event_log> log_ = std::make_shared<event_log>();
  caf::actor me_;
  caf::actor watcher_;
  std::vector<caf::actor> own_;
  std::map<std::string, caf::actor> proxies_;
};

} // namespace

int main(int argc, char** argv) {
  ferry::node_config cfg;
  cfg.add_message_type<f64_array>("bridge.f64_array");
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "bridge_member: " << ferry::render(err) << '\n';
    return 2;
  }
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "bridge_member: " << ferry::render(n.error()) << '\n';
    return 2;
  }
  {
    member_program program{**n};
    std::string line;
    while (std::getline(std::cin, line))
      std::cout << program.run(line) << std::endl;
  }
  return 0;
}
