// convergence_watch: an actor that follows a node's member events and keeps
// in a flag whether the last one was `members_converged` (every reachable
// member has seen the same view) rather than a change.
//
// Usage (a target that links ferry::framework):
//
//     auto flag = std::make_shared<std::atomic<bool>>(false);
//     n->cluster().watch_members(n->system().spawn(ferry::test::convergence_watch,
//                                        flag));
//     ... flag->load() ...
//
// Thread-safety: the flag is atomic; read it from any thread.
#pragma once

#include "ferry/cluster_events.hpp"

#include <caf/all.hpp>

#include <atomic>
#include <memory>

namespace ferry::test {

struct convergence_watch_state {
  std::shared_ptr<std::atomic<bool>> converged;
};

inline caf::behavior
convergence_watch(caf::stateful_actor<convergence_watch_state>* self,
                  std::shared_ptr<std::atomic<bool>> flag) {
  self->state.converged = std::move(flag);
  auto set = [self](bool x) { self->state.converged->store(x); };
  return {
    [set](const ferry::members_converged&) { set(true); },
    [set](const ferry::member_up&) { set(false); },
    [set](const ferry::member_unreachable&) { set(false); },
    [set](const ferry::member_reachable&) { set(false); },
    [set](const ferry::member_down&) { set(false); },
    [set](const ferry::member_removed&) { set(false); },
  };
}

} // namespace ferry::test
