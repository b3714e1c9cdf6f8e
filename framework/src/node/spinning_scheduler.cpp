// spinning_scheduler (see node/spinning_scheduler.hpp).
#include "node/spinning_scheduler.hpp"

#include <caf/actor_system.hpp>
#include <caf/config_value.hpp>
#include <caf/policy/work_sharing.hpp>
#include <caf/scheduler/coordinator.hpp>
#include <caf/settings.hpp>

#include <chrono>

#include <sched.h>

namespace ferry::detail {

spinning_stealing::worker_data::worker_data(
  caf::scheduler::abstract_coordinator* p)
  : super::worker_data(p),
    spin(caf::get_or(p->config(), "ferry.scheduler.spin",
                     caf::timespan{200'000})) {
  // nop
}

spinning_stealing::worker_data::worker_data(const worker_data& other)
  : super::worker_data(other),
    spin(other.spin) {
  // nop
}

int64_t spinning_stealing::now() {
  return std::chrono::steady_clock::now().time_since_epoch().count();
}

void spinning_stealing::yield() {
  sched_yield();
}

void install_spinning_scheduler(caf::actor_system_config& cfg) {
  cfg.module_factories.push_back(
    [](caf::actor_system& sys) -> caf::actor_system::module* {
      auto policy =
        caf::get_or(sys.config(), "scheduler.policy", caf::atom("stealing"));
      if (policy == caf::atom("sharing"))
        return new caf::scheduler::coordinator<caf::policy::work_sharing>(sys);
      return new caf::scheduler::coordinator<spinning_stealing>(sys);
    });
}

} // namespace ferry::detail
