// A member process for the entity process tests (churn, a database going
// away): a ferry node (its flags ferry's and CAF's) that hosts the entity
// type `seq` when --ferry.entities.store is set, and otherwise only asks
// entities. It prints
// "ready" and serves commands on stdin, one answer line each:
//   load <prefix> <keys> <ops> <window> [<mark>]
//       sends ops 1..<ops> to each `seq` entity "<prefix><i>", i < <keys>,
//       one op of a key in flight at a time and at most <window> in all; an
//       op that fails (its member died, a time-out) is sent again until it
//       is acknowledged (60 s at most): "loaded <acked> <retries> <errors>"
//       (<errors>: the failures by error, "state_store_failed=3,...", or -).
//       With <mark>, it first prints "loading <mark>" once <mark> ops are
//       acknowledged, so that a test can act while the load is under way.
//   check <prefix> <keys> <ops>
//       asks each entity for the ops it applied, which must be exactly
//       1..<ops> in order: "checked <wrong> <first problem>"
//   leave
//       leaves the cluster and waits until its own view shows it exiting:
//       "left"
//   up
//       "up <n>": the members up in this node's view
//   lanes
//       "lanes <n> of <links>": its links that send through a same-host lane
// A `seq` entity appends each op it gets to its saved state and answers
// once the save is acknowledged; an op equal to the last one applied (the
// same op sent again after its answer was lost) is not applied twice.
// With FERRY_TEST_HISTORY=FILE each activation appends "start <key> <ns>"
// once its state is loaded and "end <key> <ns>" when it ends
// (CLOCK_MONOTONIC, the same clock in every process of the machine).
#include "ferry/entities.hpp"
#include "ferry/entity.hpp"
#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using ops_atom = caf::atom_constant<caf::atom("ops")>;

/// A `seq` entity's state: the ops it applied, in order.
struct seq_state {
  std::vector<uint64_t> ops;
};

/// Appends lines to FERRY_TEST_HISTORY, if set.
class history {
public:
  static void write(const char* what, const std::string& key) {
    static history h;
    if (h.file_ == nullptr)
      return;
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::steady_clock::now().time_since_epoch())
                .count();
    std::lock_guard<std::mutex> guard{h.mtx_};
    std::fprintf(h.file_, "%s %s %lld\n", what, key.c_str(),
                 static_cast<long long>(ns));
    std::fflush(h.file_);
  }

private:
  history() {
    if (auto* path = std::getenv("FERRY_TEST_HISTORY"))
      file_ = std::fopen(path, "a");
  }

  std::mutex mtx_;
  std::FILE* file_ = nullptr;
};

caf::behavior seq(ferry::entity<seq_state>* self) {
  history::write("start", self->key());
  self->attach_functor([key = self->key()] { history::write("end", key); });
  return {
    [self](uint64_t op) -> caf::result<uint64_t> {
      auto& ops = self->state().ops;
      // Sent again, it was applied already (its save may have failed: it
      // too is answered once a save holding it committed).
      if (ops.empty() || ops.back() != op)
        ops.push_back(op);
      auto rp = self->make_response_promise<uint64_t>();
      self->save([rp, op](const caf::error& err) mutable {
        if (err)
          rp.deliver(err);
        else
          rp.deliver(op);
      });
      return rp;
    },
    [self](ops_atom) { return self->state().ops; },
  };
}

/// Returns the error's code name (`state_store_failed`): what ferry::render
/// writes between the category and the message.
std::string error_name(const caf::error& err) {
  auto text = ferry::render(err);
  auto first = text.find(": ");
  if (first == std::string::npos)
    return text;
  auto second = text.find(':', first + 2);
  return text.substr(first + 2, second == std::string::npos
                                  ? std::string::npos
                                  : second - first - 2);
}

/// `load`: see the top of the file.
std::string load(ferry::node& n, const std::string& prefix, uint64_t keys,
                 uint64_t ops, uint64_t window, uint64_t mark) {
  caf::scoped_actor self{n.system()};
  std::vector<caf::actor> refs;
  for (uint64_t i = 0; i < keys; ++i)
    refs.push_back(*n.entities().ref("seq", prefix + std::to_string(i)));
  // Per key: the next op to send; keys whose op is in flight wait.
  std::vector<uint64_t> next(keys, 1);
  using handle = decltype(self->request(refs[0], 3s, uint64_t{0}));
  struct flight {
    uint64_t key;
    handle h;
  };
  std::deque<flight> pending;
  std::deque<uint64_t> ready;
  for (uint64_t i = 0; i < keys; ++i)
    ready.push_back(i);
  uint64_t acked = 0;
  uint64_t retries = 0;
  std::map<std::string, uint64_t> errors;
  auto deadline = std::chrono::steady_clock::now() + 60s;
  while ((!ready.empty() || !pending.empty()) &&
         std::chrono::steady_clock::now() < deadline) {
    while (!ready.empty() && pending.size() < window) {
      auto k = ready.front();
      ready.pop_front();
      pending.push_back({k, self->request(refs[k], 3s, next[k])});
    }
    auto f = std::move(pending.front());
    pending.pop_front();
    bool ok = false;
    f.h.receive([&](uint64_t) { ok = true; },
                [&](caf::error& err) { ++errors[error_name(err)]; });
    if (ok) {
      if (++acked == mark)
        std::cout << "loading " << mark << std::endl;
      if (++next[f.key] <= ops)
        ready.push_back(f.key);
    } else {
      ++retries;
      ready.push_back(f.key);
    }
  }
  // What is still in flight at the deadline is answered before returning.
  while (!pending.empty()) {
    pending.front().h.receive([](uint64_t) {}, [](caf::error&) {});
    pending.pop_front();
  }
  std::string kinds;
  for (auto& [name, count] : errors)
    kinds += (kinds.empty() ? "" : ",") + name + "=" + std::to_string(count);
  return "loaded " + std::to_string(acked) + " " + std::to_string(retries) +
         " " + (kinds.empty() ? "-" : kinds);
}

/// `check`: see the top of the file.
std::string check(ferry::node& n, const std::string& prefix, uint64_t keys,
                  uint64_t ops) {
  caf::scoped_actor self{n.system()};
  uint64_t wrong = 0;
  std::string first = "-";
  for (uint64_t i = 0; i < keys; ++i) {
    auto key = prefix + std::to_string(i);
    std::vector<uint64_t> got;
    std::string problem;
    self->request(*n.entities().ref("seq", key), 10s, ops_atom::value)
      .receive([&](std::vector<uint64_t>& x) { got = std::move(x); },
               [&](caf::error& err) { problem = ferry::render(err); });
    if (problem.empty()) {
      for (uint64_t j = 0; j < std::max<uint64_t>(ops, got.size()); ++j)
        if (j >= got.size() || j >= ops || got[j] != j + 1) {
          problem = "op " + std::to_string(j + 1) + " of " +
                    std::to_string(got.size()) + " applied is " +
                    (j < got.size() ? std::to_string(got[j]) : "missing");
          break;
        }
    }
    if (!problem.empty() && wrong++ == 0)
      first = key + ": " + problem;
    if (wrong >= 3)
      break; // enough to say what is wrong, without waiting for every key
  }
  for (auto& c : first)
    if (c == '\n')
      c = ' ';
  return "checked " + std::to_string(wrong) + " " + first;
}

/// `leave`: leaves and waits (30 s at most) until this member's own view
/// shows it exiting or removed.
std::string leave(ferry::node& n, const std::string& name) {
  n.cluster().leave();
  for (int i = 0; i < 300; ++i) {
    bool gone = true;
    for (auto& m : n.cluster().members())
      if (m.name == name && (m.status == ferry::member_status::joining ||
                             m.status == ferry::member_status::up ||
                             m.status == ferry::member_status::leaving))
        gone = false;
    if (gone)
      return "left";
    std::this_thread::sleep_for(100ms);
  }
  return "left (not seen exiting within 30 s)";
}

/// Returns the members up in `n`'s view.
size_t up_count(ferry::node& n) {
  size_t result = 0;
  for (auto& m : n.cluster().members())
    result += m.status == ferry::member_status::up ? 1 : 0;
  return result;
}

/// Returns "lanes <n> of <links>": the links that send through a same-host
/// lane.
std::string lane_count(ferry::node& n) {
  auto links = n.stats();
  auto lanes =
    std::count_if(links.begin(), links.end(), [](auto& x) { return x.lane; });
  return "lanes " + std::to_string(lanes) + " of " +
         std::to_string(links.size());
}

} // namespace

int main(int argc, char** argv) {
  ferry::node_config cfg;
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "entity_member: " << ferry::render(err) << '\n';
    return 2;
  }
  cfg.add_message_type<std::vector<uint64_t>>("test.u64s");
  if (!cfg.entities.store.empty())
    cfg.add_entity_type<seq_state>("seq", seq);
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "entity_member: " << ferry::render(n.error()) << '\n';
    return 1;
  }
  std::cout << "ready" << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in{line};
    std::string cmd;
    std::string prefix;
    uint64_t keys = 0;
    uint64_t ops = 0;
    uint64_t window = 0;
    uint64_t mark = 0;
    in >> cmd;
    if (cmd == "load" && in >> prefix >> keys >> ops >> window && keys > 0 &&
        window > 0) {
      in >> mark;  // optional: 0 when absent
      std::cout << load(**n, prefix, keys, ops, window, mark) << std::endl;
    }
    else if (cmd == "check" && in >> prefix >> keys >> ops)
      std::cout << check(**n, prefix, keys, ops) << std::endl;
    else if (cmd == "up")
      std::cout << "up " << up_count(**n) << std::endl;
    else if (cmd == "lanes")
      std::cout << lane_count(**n) << std::endl;
    else if (cmd == "leave")
      std::cout << leave(**n, cfg.node_name) << std::endl;
    else
      std::cout << "error unknown command: " << line << std::endl;
  }
  return 0;
}
