// A node process for the metrics tests: publishes an echo actor, prints
// "ready port=<N> metrics=<M>" (M: its Prometheus endpoint, 0 when off),
// then serves commands on stdin, one answer line each, until stdin closes:
//   connect <port>         link to the node at 127.0.0.1:<port>: "connected"
//   send <n> <kind>        n request round trips to that node's echo actor
//                          (kind: record, inspected or bytes): "sent <n>"
//   put <bytes>            puts an object into the store and keeps it:
//                          "put <id>"
//   store-used             "store-used <bytes>" (the store's own figure)
//   stats                  "stats <peer> <family>=<sent>/<received> ..."
//   count <key> <n>        n requests to the counter entity <key>, each
//                          adding 1 and saving: "counted <total>", or
//                          "error <what>" at the first that fails
// With --ferry.entities.store=... the node hosts the entity type `counter`
// (a total it saves on every request).
// Command-line flags are ferry's and CAF's (--ferry.metrics.port=0, ...).
#include "test_types.hpp"

#include "ferry/entities.hpp"
#include "ferry/entity.hpp"
#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include "ferry/store/object_store.hpp"

#include <caf/all.hpp>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;

caf::behavior echo() {
  return {
    [](const ferry::test::record& x) { return x; },
    [](const ferry::test::inspected_only& x) { return x; },
    [](const std::vector<std::byte>& x) { return x.size(); },
  };
}

/// The state of a `counter` entity.
struct counter_state {
  int64_t total = 0;
};

/// Adds 1 to its total for each request, answering the total once saved.
caf::behavior counter(ferry::entity<counter_state>* self) {
  return {
    [self](int64_t n) -> caf::result<int64_t> {
      self->state().total += n;
      auto rp = self->make_response_promise<int64_t>();
      self->save([self, rp](const caf::error& err) mutable {
        if (err)
          rp.deliver(err);
        else
          rp.deliver(self->state().total);
      });
      return rp;
    },
  };
}

/// Sends `n` requests of `kind` to `peer` one after the other; returns the
/// number answered.
int send(caf::scoped_actor& self, const caf::actor& peer, int n,
         const std::string& kind) {
  int answered = 0;
  auto fail = [](const caf::error& err) {
    std::cerr << "metrics_node: " << ferry::render(err) << '\n';
  };
  for (int i = 0; i < n; ++i) {
    if (kind == "record")
      self
        ->request(peer, 10s,
                  ferry::test::record{i, "r", {1.f, 2.f}, {{"k", i}}})
        .receive([&](const ferry::test::record&) { ++answered; }, fail);
    else if (kind == "inspected")
      self->request(peer, 10s, ferry::test::inspected_only{i})
        .receive([&](const ferry::test::inspected_only&) { ++answered; }, fail);
    else
      self->request(peer, 10s, std::vector<std::byte>(64, std::byte{7}))
        .receive([&](size_t) { ++answered; }, fail);
  }
  return answered;
}

} // namespace

int main(int argc, char** argv) {
  ferry::node_config cfg;
  ferry::test::register_test_types(cfg);
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "metrics_node: " << ferry::render(err) << '\n';
    return 2;
  }
  if (!cfg.entities.store.empty())
    cfg.add_entity_type<counter_state>("counter", counter);
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "metrics_node: " << ferry::render(n.error()) << '\n';
    return 1;
  }
  auto port = (*n)->publish((*n)->system().spawn(echo));
  if (!port) {
    std::cerr << "metrics_node: " << ferry::render(port.error()) << '\n';
    return 1;
  }
  std::cout << "ready port=" << *port << " metrics=" << (*n)->metrics_port()
            << std::endl;
  caf::scoped_actor self{(*n)->system()};
  caf::actor peer;
  std::vector<ferry::store::object_ref> kept;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in{line};
    std::string cmd;
    in >> cmd;
    if (cmd == "connect") {
      uint16_t to = 0;
      in >> to;
      auto proxy = (*n)->remote_actor("127.0.0.1", to);
      if (!proxy) {
        std::cout << "error " << ferry::render(proxy.error()) << std::endl;
        continue;
      }
      peer = *proxy;
      std::cout << "connected" << std::endl;
    } else if (cmd == "send") {
      int count = 0;
      std::string kind;
      in >> count >> kind;
      std::cout << "sent " << send(self, peer, count, kind) << std::endl;
    } else if (cmd == "put") {
      size_t bytes = 0;
      in >> bytes;
      auto* store = (*n)->store();
      auto ref =
        store ? store->put(std::vector<std::byte>(bytes))
              : caf::expected<ferry::store::object_ref>{
                  caf::make_error(ferry::errc::invalid_config, "no store")};
      if (!ref) {
        std::cout << "error " << ferry::render(ref.error()) << std::endl;
        continue;
      }
      std::cout << "put " << static_cast<uint64_t>(ref->id()) << std::endl;
      kept.push_back(std::move(*ref));
    } else if (cmd == "store-used") {
      auto summary =
        (*n)->store()
          ? (*n)->store()->memory_summary()
          : caf::expected<ferry::store::memory_summary>{
              caf::make_error(ferry::errc::invalid_config, "no store")};
      if (!summary)
        std::cout << "error " << ferry::render(summary.error()) << std::endl;
      else
        std::cout << "store-used " << summary->bytes_used << std::endl;
    } else if (cmd == "count") {
      std::string key;
      int count = 0;
      in >> key >> count;
      auto whom = (*n)->entities().ref("counter", key);
      int64_t total = -1;
      caf::error failed = whom ? caf::error{} : whom.error();
      for (int i = 0; !failed && i < count; ++i)
        self->request(*whom, 10s, int64_t{1})
          .receive([&](int64_t x) { total = x; },
                   [&](caf::error& err) { failed = std::move(err); });
      if (failed)
        std::cout << "error " << ferry::render(failed) << std::endl;
      else
        std::cout << "counted " << total << std::endl;
    } else if (cmd == "stats") {
      for (auto& link : (*n)->stats()) {
        std::cout << "stats " << link.peer;
        std::map<std::string, std::pair<uint64_t, uint64_t>> by_family;
        for (auto& [family, count] : link.sent_by_family)
          by_family[family].first = count;
        for (auto& [family, count] : link.received_by_family)
          by_family[family].second = count;
        for (auto& [family, counts] : by_family)
          std::cout << ' ' << family << '=' << counts.first << '/'
                    << counts.second;
        std::cout << '\n';
      }
      std::cout << "end" << std::endl;
    } else {
      std::cout << "error unknown command " << cmd << std::endl;
    }
  }
  return 0;
}
