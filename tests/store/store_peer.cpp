// Peer process for the store's multi-process tests. Attaches to the store
// named on the command line and answers commands read from stdin, one per
// line, with one line on stdout. Exits when stdin closes.
//
//   put <size> <seed>       -> "put <id>"             (keeps the handle)
//   get <id>                -> "got <id> <checksum>"  (keeps the handle)
//   drop <id>               -> "dropped <n>"          (drops its handles)
//   count <id>              -> "count <n>"
//   export <id>             -> "ticket <object> <ticket>"
//   redeem <object> <ticket>-> "redeemed <checksum>"  (keeps the handle)
//   create <size>           -> "creating <id>"        (keeps the builder)
//   hang-in-create <size>   -> "in-create", then blocks inside create
//   hang-in-io              -> "armed"; the next spill or restore I/O
//                              prints "in-io" and blocks (lock released)
//   pin <id>                -> "pinned"                (out-of-band wire)
//   churn <seed>            -> "churning", then random puts, gets, copies,
//                              tickets, builders and drops until killed
// Errors answer "error <text>".
#include "ferry/store/errc.hpp"
#include "ferry/store/log.hpp"
#include "ferry/store/object_store.hpp"
#include "ferry/store/parked_ref.hpp"

#include "store_impl.hpp"
#include "store_test_support.hpp"

#include <unistd.h>

#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>

using namespace ferry::store;

namespace {

void hang() {
  std::cout << "in-create" << std::endl;
  for (;;)
    ::pause();
}

void hang_io() {
  std::cout << "in-io" << std::endl;
  for (;;)
    ::pause();
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: ferry_store_peer <store name>\n";
    return 2;
  }
  store_config cfg;
  cfg.name = argv[1];
  cfg.open_only = true;
  cfg.prefault = false;
  cfg.reaper_interval = std::chrono::milliseconds{0};
  auto store = object_store::attach(cfg);
  if (!store) {
    std::cout << "error " << render(store.error()) << std::endl;
    return 1;
  }
  std::cout << "ready " << ::getpid() << std::endl;
  std::multimap<uint64_t, object_ref> held;
  std::vector<object_builder> builders;
  std::vector<parked_ref> parked;
  set_log_hook([](std::string_view) {});
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in{line};
    std::string cmd;
    in >> cmd;
    auto fail = [](const caf::error& err) {
      std::cout << "error " << render(err) << std::endl;
    };
    if (cmd == "put") {
      size_t size = 0;
      uint32_t seed = 0;
      in >> size >> seed;
      auto ref = store->put(test::pattern(size, seed));
      if (!ref) {
        fail(ref.error());
        continue;
      }
      std::cout << "put " << to_string(ref->id()) << std::endl;
      held.emplace(static_cast<uint64_t>(ref->id()), std::move(*ref));
    } else if (cmd == "get") {
      uint64_t id = 0;
      in >> id;
      auto ref = store->get(object_id{id});
      if (!ref) {
        fail(ref.error());
        continue;
      }
      std::cout << "got " << id << " " << test::checksum(ref->bytes())
                << std::endl;
      held.emplace(id, std::move(*ref));
    } else if (cmd == "drop") {
      uint64_t id = 0;
      in >> id;
      auto n = held.erase(id);
      std::cout << "dropped " << n << std::endl;
    } else if (cmd == "count") {
      uint64_t id = 0;
      in >> id;
      auto i = held.find(id);
      std::cout << "count " << (i == held.end() ? 0 : i->second.ref_count())
                << std::endl;
    } else if (cmd == "export") {
      uint64_t id = 0;
      in >> id;
      auto i = held.find(id);
      if (i == held.end()) {
        std::cout << "error no handle" << std::endl;
        continue;
      }
      auto ticket = i->second.export_in_band();
      if (!ticket) {
        fail(ticket.error());
        continue;
      }
      std::cout << "ticket " << to_string(ticket->object) << " " << ticket->id
                << std::endl;
    } else if (cmd == "redeem") {
      uint64_t object = 0;
      uint64_t ticket = 0;
      in >> object >> ticket;
      auto ref = store->redeem(transfer_ticket{object_id{object}, ticket});
      if (!ref) {
        fail(ref.error());
        continue;
      }
      std::cout << "redeemed " << test::checksum(ref->bytes()) << std::endl;
      held.emplace(object, std::move(*ref));
    } else if (cmd == "create") {
      size_t size = 0;
      in >> size;
      auto builder = store->create(size);
      if (!builder) {
        fail(builder.error());
        continue;
      }
      std::cout << "creating " << to_string(builder->id()) << std::endl;
      builders.push_back(std::move(*builder));
    } else if (cmd == "hang-in-create") {
      size_t size = 0;
      in >> size;
      detail::store_impl::set_create_hook(hang);
      auto builder = store->create(size);
      std::cout << "error create returned" << std::endl;
    } else if (cmd == "hang-in-io") {
      detail::store_impl::set_io_hook(hang_io);
      std::cout << "armed" << std::endl;
    } else if (cmd == "churn") {
      uint32_t seed = 0;
      in >> seed;
      std::cout << "churning" << std::endl;
      std::mt19937 gen{seed};
      std::vector<object_ref> refs;
      std::vector<transfer_ticket> tickets;
      auto bytes = test::pattern(64000, seed);
      for (;;) {
        switch (gen() % 6) {
          case 0: {
            // Mostly small objects (time goes to the store's bookkeeping),
            // now and then a large one (memory runs out, objects spill).
            auto size = gen() % 16 == 0 ? 30000 + gen() % 34000
                                        : gen() % 2000;
            auto ref = store->put(std::span{bytes}.first(size));
            if (ref)
              refs.push_back(std::move(*ref));
            break;
          }
          case 1:
            if (!refs.empty())
              refs.push_back(refs[gen() % refs.size()]);
            break;
          case 2:
            if (!refs.empty()) {
              if (auto t = refs[gen() % refs.size()].export_in_band())
                tickets.push_back(*t);
            }
            break;
          case 3:
            if (!tickets.empty()) {
              auto t = tickets.back();
              tickets.pop_back();
              if (gen() % 2 == 0) {
                if (auto ref = store->redeem(t))
                  refs.push_back(std::move(*ref));
              } else {
                static_cast<void>(store->cancel(t));
              }
            }
            break;
          case 4: {
            // Dropped unsealed: the builder abandons its object.
            auto builder = store->create(gen() % 5000);
            break;
          }
          default:
            if (!refs.empty())
              refs.erase(refs.begin()
                         + static_cast<ptrdiff_t>(gen() % refs.size()));
            if (refs.size() > 8)
              refs.clear();
        }
      }
    } else if (cmd == "pin") {
      uint64_t id = 0;
      in >> id;
      auto i = held.find(id);
      if (i == held.end()) {
        std::cout << "error no handle" << std::endl;
        continue;
      }
      auto wire = to_wire(i->second);
      if (!wire) {
        fail(wire.error());
        continue;
      }
      std::cout << "pinned" << std::endl;
    } else if (cmd == "park") {
      // Parks the object and drops this process's handles to it.
      uint64_t id = 0;
      in >> id;
      auto ref = store->get(object_id{id});
      if (!ref) {
        fail(ref.error());
        continue;
      }
      auto p = park(*ref);
      if (!p) {
        fail(p.error());
        continue;
      }
      parked.push_back(std::move(*p));
      ref->reset();
      held.erase(id);
      std::cout << "parked " << id << std::endl;
    } else {
      std::cout << "error unknown command " << cmd << std::endl;
    }
  }
  return 0;
}
