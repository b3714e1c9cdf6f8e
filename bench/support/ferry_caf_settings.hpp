// The CAF settings a ferry node sets, for benchmarks that run plain CAF
// beside ferry ("raw-caf-tuned").
//
// `apply_ferry_caf_settings` copies every entry of the `scheduler`,
// `work-stealing` and `middleman` categories a default `ferry::node_config`
// holds into another CAF config, so a plain CAF baseline runs with the same
// scheduler and middleman settings as a ferry node (as ferry sets them, not
// as a list kept here). Stateless; call it before `actor_system` starts.
#pragma once

#include "ferry/node_config.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/settings.hpp>

#include <string>

namespace ferry::bench {

inline void apply_ferry_caf_settings(caf::actor_system_config& cfg) {
  ferry::node_config ferry_cfg;
  for (std::string category : {"scheduler", "work-stealing", "middleman"}) {
    auto* value = caf::get_if(&ferry_cfg.content,
                              caf::string_view{category.data(),
                                               category.size()});
    if (value == nullptr)
      continue;
    if (auto* xs = caf::get_if<caf::settings>(value))
      for (auto& [key, x] : *xs)
        cfg.set(category + "." + key, x);
  }
}

} // namespace ferry::bench
