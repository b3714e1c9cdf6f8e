// ferry-store: inspects the shared-memory object store of this host.
//
//     ferry-store [--name NAME] [list]   objects, holders and totals
//     ferry-store [--name NAME] reap     frees the counts of dead processes
//     ferry-store [--name NAME] remove   removes the segment and spill files
//
// NAME defaults to the default store name (`ferry-<uid>`). The tool attaches
// without prefaulting and never creates a store.
#include "ferry/store/errc.hpp"
#include "ferry/store/object_store.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

namespace {

int usage() {
  std::cerr << "usage: ferry-store [--name NAME] [list|reap|remove]\n";
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  ferry::store::store_config cfg;
  cfg.open_only = true;
  cfg.prefault = false;
  cfg.reaper_interval = std::chrono::milliseconds{0};
  std::string command = "list";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--name" && i + 1 < argc)
      cfg.name = argv[++i];
    else if (arg == "-h" || arg == "--help")
      return usage() - 2;
    else if (arg == "list" || arg == "reap" || arg == "remove")
      command = arg;
    else
      return usage();
  }
  if (command == "remove") {
    if (auto err = ferry::store::object_store::remove(cfg.name)) {
      std::cerr << "ferry-store: " << ferry::store::render(err) << '\n';
      return 1;
    }
    std::cout << "removed store '" << cfg.name << "'\n";
    return 0;
  }
  auto store = ferry::store::object_store::attach(cfg);
  if (!store) {
    std::cerr << "ferry-store: " << ferry::store::render(store.error())
              << '\n';
    return 1;
  }
  if (command == "reap") {
    auto reaped = store->reap();
    if (!reaped) {
      std::cerr << "ferry-store: " << ferry::store::render(reaped.error())
                << '\n';
      return 1;
    }
    std::cout << "reaped " << *reaped << " dead process(es)\n";
    return 0;
  }
  auto summary = store->memory_summary();
  if (!summary) {
    std::cerr << "ferry-store: " << ferry::store::render(summary.error())
              << '\n';
    return 1;
  }
  // This tool attached only to look: leave itself out of the list.
  std::erase_if(summary->processes, [](const ferry::store::process_info& x) {
    return x.pid == static_cast<int32_t>(::getpid());
  });
  std::cout << to_string(*summary);
  return 0;
}
