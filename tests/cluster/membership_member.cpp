// One member of a membership test cluster: a ferry node that joins the
// cluster its flags name (--ferry.cluster.*), with a service actor
// registered under "svc" and under "sink-<node name>". The service answers
// a request (`std::string`) with "<node name>/<incarnation>" and counts the
// numbers sent to it one way, noting whether they came in order.
//
// It prints "started" once its node runs, then answers each line of stdin
// with one line:
//   view              "view self=<state> inc=<k> links=<up links>
//                      converged=<0|1> members=<name>:<state>:<r|u>,..."
//                     (members sorted by name; self=none when this node is
//                     not in its own view; converged: the last member event
//                     was `members_converged`)
//   find <key>        "found <n>": the actors under `key` this node knows
//   ask <key>         "answers <a> <b> ...": asks each actor under `key`
//                     (sorted; "error:<code>" for a failed request)
//   register <key>    registers the service under `key` too;
//                     "registered <key>"
//   stream <key> <n>  sends 1..n one way to the first actor under `key`;
//                     "streamed <n>"
//   received          "received <count> <in order: 1|0>"
//   metrics           "metrics up=<n> unreachable=<n> convergence=<s>" from
//                     the node's Prometheus text
//   leave             `cluster::leave()`; "leaving"
//   restart           ends the node and starts it again (a new
//                     incarnation); "restarted"
// It exits when stdin closes.
#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/test/convergence_watch.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <sstream>
#include <tuple>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;

using count_atom = caf::atom_constant<caf::atom("count")>;

struct service_state {
  uint64_t count = 0;
  uint64_t last = 0;
  bool in_order = true;
};

caf::behavior service(caf::stateful_actor<service_state>* self,
                      std::string who) {
  return {
    [who](const std::string&) { return who; },
    [self](uint64_t x) {
      auto& st = self->state;
      st.in_order &= x == st.last + 1;
      st.last = x;
      ++st.count;
    },
    [self](count_atom) {
      return std::make_tuple(self->state.count, self->state.in_order);
    },
  };
}

/// Returns the value of the sample `name` (a full sample name with labels)
/// in `text`, or "none".
std::string sample(const std::string& text, const std::string& name) {
  auto at = text.find("\n" + name + " ");
  if (at == std::string::npos)
    return "none";
  auto from = at + name.size() + 2;
  return text.substr(from, text.find('\n', from) - from);
}

class member {
public:
  explicit member(ferry::node_config& cfg) : cfg_(cfg) {
  }

  ~member() {
    stop();
  }

  /// Starts the node; returns what went wrong (empty: it runs).
  std::string start() {
    auto n = ferry::node::start(cfg_);
    if (!n)
      return ferry::render(n.error());
    node_ = std::move(*n);
    ++incarnation_;
    auto& sys = node_->system();
    svc_ = sys.spawn(service, cfg_.node_name + "/"
                                + std::to_string(incarnation_));
    converged_ = std::make_shared<std::atomic<bool>>(false);
    watcher_ = sys.spawn(ferry::test::convergence_watch, converged_);
    node_->cluster().watch_members(watcher_);
    for (auto key : {std::string{"svc"}, "sink-" + cfg_.node_name})
      if (auto ok = node_->cluster().register_actor(key, svc_); !ok)
        return ferry::render(ok.error());
    return {};
  }

  void stop() {
    if (!node_)
      return;
    caf::anon_send_exit(svc_, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(watcher_, caf::exit_reason::user_shutdown);
    svc_ = nullptr;
    watcher_ = nullptr;
    node_.reset();
  }

  std::string view() {
    auto members = node_->cluster().members();
    std::sort(members.begin(), members.end(),
              [](auto& x, auto& y) { return x.name < y.name; });
    std::string self_state = "none";
    std::string list;
    for (auto& m : members) {
      if (m.address == cfg_.cluster.address)
        self_state = to_string(m.status);
      list += (list.empty() ? "" : ",") + m.name + ":" + to_string(m.status)
              + ":" + (m.reachable ? "r" : "u");
    }
    size_t links = 0;
    for (auto& p : node_->peers())
      links += p.up ? 1 : 0;
    bool converged = converged_->load();
    return "view self=" + self_state + " inc=" + std::to_string(incarnation_)
           + " links=" + std::to_string(links)
           + " converged=" + (converged ? "1" : "0") + " members=" + list;
  }

  std::vector<caf::actor> find(const std::string& key) {
    auto found = node_->cluster().find_actors(key);
    return found ? *found : std::vector<caf::actor>{};
  }

  std::string ask(const std::string& key) {
    std::vector<std::string> answers;
    caf::scoped_actor self{node_->system()};
    for (auto& whom : find(key))
      self->request(whom, 5s, std::string{"who"})
        .receive([&](std::string& x) { answers.push_back(std::move(x)); },
                 [&](caf::error& err) {
                   answers.push_back("error:" + std::to_string(err.code()));
                 });
    std::sort(answers.begin(), answers.end());
    std::string out = "answers";
    for (auto& x : answers)
      out += " " + x;
    return out;
  }

  std::string register_service(const std::string& key) {
    auto ok = node_->cluster().register_actor(key, svc_);
    return ok ? "registered " + key : "failed " + ferry::render(ok.error());
  }

  std::string stream(const std::string& key, uint64_t n) {
    auto to = find(key);
    if (to.empty())
      return "streamed 0 (nothing under " + key + ")";
    for (uint64_t i = 1; i <= n; ++i)
      caf::anon_send(to.front(), i);
    return "streamed " + std::to_string(n);
  }

  std::string received() {
    caf::scoped_actor self{node_->system()};
    std::string out = "received (no answer)";
    self->request(svc_, 5s, count_atom::value)
      .receive(
        [&](uint64_t count, bool in_order) {
          out = "received " + std::to_string(count) + " "
                + (in_order ? "1" : "0");
        },
        [](caf::error&) {});
    return out;
  }

  std::string metrics() {
    auto text = "\n" + node_->metrics_text();
    return "metrics up=" + sample(text, "ferry_cluster_members{state=\"up\"}")
           + " unreachable=" + sample(text, "ferry_cluster_unreachable")
           + " convergence="
           + sample(text, "ferry_cluster_convergence_seconds");
  }

  ferry::node& node() {
    return *node_;
  }

private:
  ferry::node_config& cfg_;
  std::unique_ptr<ferry::node> node_;
  caf::actor svc_;
  caf::actor watcher_;
  std::shared_ptr<std::atomic<bool>> converged_;
  int incarnation_ = 0;
};

} // namespace

int main(int argc, char** argv) {
  ferry::node_config cfg;
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "membership_member: " << ferry::render(err) << '\n';
    return 2;
  }
  member m{cfg};
  if (auto why = m.start(); !why.empty()) {
    std::cout << "failed " << why << std::endl;
    return 1;
  }
  std::cout << "started" << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in{line};
    std::string command;
    std::string key;
    in >> command >> key;
    std::string answer;
    if (command == "view") {
      answer = m.view();
    } else if (command == "find") {
      answer = "found " + std::to_string(m.find(key).size());
    } else if (command == "register") {
      answer = m.register_service(key);
    } else if (command == "ask") {
      answer = m.ask(key);
    } else if (command == "stream") {
      uint64_t n = 0;
      in >> n;
      answer = m.stream(key, n);
    } else if (command == "received") {
      answer = m.received();
    } else if (command == "metrics") {
      answer = m.metrics();
    } else if (command == "leave") {
      m.node().cluster().leave();
      answer = "leaving";
    } else if (command == "restart") {
      m.stop();
      auto why = m.start();
      answer = why.empty() ? "restarted" : "failed " + why;
    } else {
      answer = "unknown command " + command;
    }
    std::cout << answer << std::endl;
  }
  return 0;
}
