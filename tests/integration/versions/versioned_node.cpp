// A ferry node built at one version of the types in versioned_types.hpp
// (FERRY_TEST_TYPE_VERSION), for the tests of nodes of two builds.
//
//   versioned_node serve [flags]
//       publishes an actor that answers every type with what it read of
//       the value (`describe`), prints "port <N>", then serves until stdin
//       closes
//   versioned_node send PORT FAMILY [flags]
//       connects to PORT sending with FAMILY only, sends one value of each
//       type (the raw family: the pod_* types only) and prints one line per
//       value: "<name> got <what the server read>" or
//       "<name> error <code> <text>"; then "done"
//
// Every line the node logs is printed as "log <line>". Other flags are
// ferry's and CAF's (--ferry.node-name=...).
#include "versioned_types.hpp"

#include "ferry/errc.hpp"
#include "ferry/serializers/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <iostream>
#include <mutex>
#include <string>
#include <vector>

using namespace ferry::test::versions;

namespace {

std::mutex out_mtx;

void print(const std::string& line) {
  std::lock_guard guard{out_mtx};
  std::cout << line << std::endl;
}

/// Answers each type with what this build read of it (`describe`).
caf::behavior echo() {
  return {
    [](const same& x) { return describe(x); },
    [](const added& x) { return describe(x); },
    [](const removed& x) { return describe(x); },
    [](const renamed& x) { return describe(x); },
    [](const reordered& x) { return describe(x); },
    [](const widened& x) { return describe(x); },
    [](const nested& x) { return describe(x); },
    [](const frozen& x) { return describe(x); },
    [](const pod_same& x) { return describe(x); },
    [](const pod_widened& x) { return describe(x); },
  };
}

/// The code of a ferry error ("type_mismatch"), or "other".
std::string code_of(const caf::error& err) {
  if (err.category() == caf::atom("ferry_fw"))
    return ferry::to_string(static_cast<ferry::errc>(err.code()));
  if (err.category() == caf::atom("ferry_ser"))
    return ferry::serializers::to_string(
      static_cast<ferry::serializers::errc>(err.code()));
  return "other";
}

template <class T>
void ask(caf::scoped_actor& self, const caf::actor& server, const char* name,
         const T& x) {
  std::string outcome;
  self->request(server, std::chrono::seconds{30}, x)
    .receive([&](const std::string& seen) { outcome = "got " + seen; },
             [&](const caf::error& err) {
               outcome = "error " + code_of(err) + " " + ferry::render(err);
             });
  print(std::string{name} + " " + outcome);
}

/// Sends one value of each type the family can carry (raw: the pod types).
void send_all(caf::scoped_actor& self, const caf::actor& server, bool raw) {
  if (!raw) {
    ask(self, server, "same", same{7, "seven"});
    reordered r;
    r.id = 6;
    r.name = "six";
    ask(self, server, "reordered", r);
    ask(self, server, "widened", widened{4, 40});
    ask(self, server, "nested", nested{5, {line{"pen", 2}}});
#if FERRY_TEST_TYPE_VERSION == 1
    ask(self, server, "added", added{1, "one"});
    ask(self, server, "removed", removed{2, "two", 4.5});
    ask(self, server, "renamed", renamed{3, "three"});
#else
    ask(self, server, "added", added{1, "one", 2.5});
    ask(self, server, "removed", removed{2, "two"});
    ask(self, server, "renamed", renamed{3, "drei"});
    ask(self, server, "widened_big", widened{4, int64_t{1} << 40});
#endif
    ask(self, server, "frozen", frozen{8, 80});
  }
  ask(self, server, "pod_same", pod_same{9, 0.5});
  ask(self, server, "pod_widened", pod_widened{10, 100});
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: versioned_node serve | send PORT FAMILY [flags]\n";
    return 2;
  }
  std::string mode = argv[1];
  bool sending = mode == "send";
  if (sending && argc < 4) {
    std::cerr << "usage: versioned_node send PORT FAMILY [flags]\n";
    return 2;
  }
  int skip = sending ? 4 : 2;
  ferry::node_config cfg;
  cfg.add_message_type<same>("v.same");
  cfg.add_message_type<added>("v.added");
  cfg.add_message_type<removed>("v.removed");
  cfg.add_message_type<renamed>("v.renamed");
  cfg.add_message_type<reordered>("v.reordered");
  cfg.add_message_type<widened>("v.widened");
  cfg.add_message_type<nested>("v.nested");
  cfg.add_message_type<frozen>("v.frozen");
  cfg.add_message_type<pod_same>("v.pod_same");
  cfg.add_message_type<pod_widened>("v.pod_widened");
  cfg.log_sink = [](const std::string& line) { print("log " + line); };
  std::vector<char*> rest{argv[0]};
  for (int i = skip; i < argc; ++i)
    rest.push_back(argv[i]);
  if (auto err = cfg.parse(static_cast<int>(rest.size()), rest.data())) {
    std::cerr << "versioned_node: " << ferry::render(err) << '\n';
    return 2;
  }
  cfg.store_enabled = false;
  if (sending)
    cfg.default_link.serializers = {argv[3]};
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "versioned_node: " << ferry::render(n.error()) << '\n';
    return 2;
  }
  auto& sys = (*n)->system();
  if (!sending) {
    auto port = (*n)->publish(sys.spawn(echo), 0, "127.0.0.1");
    if (!port) {
      std::cerr << "versioned_node: " << ferry::render(port.error()) << '\n';
      return 1;
    }
    print("port " + std::to_string(*port));
    std::string line;
    while (std::getline(std::cin, line)) {
      // serve until stdin closes
    }
    return 0;
  }
  auto server = (*n)->remote_actor("127.0.0.1",
                                   static_cast<uint16_t>(std::stoi(argv[2])));
  if (!server) {
    std::cerr << "versioned_node: " << ferry::render(server.error()) << '\n';
    return 1;
  }
  caf::scoped_actor self{sys};
  send_all(self, *server, std::string{argv[3]} == "raw");
  print("done");
  return 0;
}
