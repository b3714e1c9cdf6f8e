// The CAF settings a ferry node runs with, for benchmarks that run plain CAF
// beside ferry ("raw-caf-tuned").
//
// `apply_ferry_caf_settings` gives another CAF config a ferry node's
// scheduler settings and fixed middleman settings:
// - every entry of the `scheduler` and `work-stealing` categories a default
//   `ferry::node_config` holds, copied from one (so the baseline follows
//   ferry's scheduler settings as they are, not as a list kept here);
// - the middleman's, fixed here: `middleman.workers` = 0 (the middleman's
//   thread reads incoming messages itself, no BASP worker jobs on the
//   scheduler), `middleman.heartbeat-interval` = 5 s and
//   `middleman.connection-timeout` = 30 s (a silent connection goes
//   down). A ferry node's config carries no `middleman.*` key to copy: its
//   links between hosts do not run on CAF's middleman.
// The caller loads `caf::io::middleman` into `cfg` itself (the baseline
// links CAF's io library; ferry does not lend it). Stateless; call it
// before the `actor_system` starts, and before `caf-application.ini` or
// flags are read, so those still override it.
#pragma once

#include "ferry/node_config.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/settings.hpp>
#include <caf/timespan.hpp>

#include <chrono>
#include <string>

namespace ferry::bench {

inline void apply_ferry_caf_settings(caf::actor_system_config& cfg) {
  ferry::node_config ferry_cfg;
  for (std::string category : {"scheduler", "work-stealing"}) {
    auto* value = caf::get_if(&ferry_cfg.content,
                              caf::string_view{category.data(),
                                               category.size()});
    if (value == nullptr)
      continue;
    if (auto* xs = caf::get_if<caf::settings>(value))
      for (auto& [key, x] : *xs)
        cfg.set(category + "." + key, x);
  }
  cfg.set("middleman.workers", 0);
  cfg.set("middleman.heartbeat-interval",
          caf::timespan{std::chrono::seconds{5}});
  cfg.set("middleman.connection-timeout",
          caf::timespan{std::chrono::seconds{30}});
}

} // namespace ferry::bench
