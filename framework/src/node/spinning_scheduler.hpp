// spinning_scheduler: CAF's work-stealing scheduler with an idle strategy.
//
// A CAF worker that runs out of jobs polls its queue a few hundred times
// and then sleeps on a condition variable; a message for an idle actor
// then costs the sending thread a notify and the worker a wake-up (tens of
// microseconds on a small virtual machine), on every request and every
// answer of a round trip. This policy keeps a worker that just ran a job
// looking for the next one for `ferry.scheduler.spin` (yielding its core
// between looks, so runnable threads of the host go first), as BEAM's
// schedulers busy-wait before they sleep; and a job from outside the
// scheduler (a message an I/O thread delivers) goes to a worker that is
// looking right now, which takes it without a wake-up. A worker that found
// nothing for the whole spin sleeps as CAF's does, so an idle node spends
// nothing; a worker that was asleep keeps CAF's protocol (the job is queued
// and the worker notified).
//
// `install_spinning_scheduler` makes a config use it when its scheduler
// policy is `stealing` (CAF's default), with CAF's own scheduler for any
// other policy. The spin is read from the config's `ferry.scheduler.spin`
// (a timespan the node puts there from `node_config::scheduler_spin`
// before it makes its actor system; 200 µs when absent).
//
// Thread-safety: as CAF's policies: each worker's data is its own, the
// queues are CAF's thread-safe ones, `spinning` is atomic.
#pragma once

#include <caf/actor_system_config.hpp>
#include <caf/policy/work_stealing.hpp>
#include <caf/timespan.hpp>

#include <atomic>
#include <cstdint>

namespace ferry::detail {

class spinning_stealing : public caf::policy::work_stealing {
public:
  using super = caf::policy::work_stealing;

  struct worker_data : super::worker_data {
    explicit worker_data(caf::scheduler::abstract_coordinator* p);
    worker_data(const worker_data& other);

    /// How long the worker looks for work after a job.
    caf::timespan spin;
    /// Whether the worker is looking for work without sleeping now.
    std::atomic<bool> spinning{false};
  };

  /// A job from outside the scheduler: to a worker that is looking now, if
  /// there is one, else round robin as CAF does.
  template <class Coordinator>
  void central_enqueue(Coordinator* self, caf::resumable* job) {
    auto n = self->num_workers();
    auto first = d(self).next_worker++;
    for (size_t i = 0; i < n; ++i) {
      auto* w = self->worker_by_id((first + i) % n);
      if (d(w).spinning.load(std::memory_order_relaxed)) {
        w->external_enqueue(job);
        return;
      }
    }
    self->worker_by_id(first % n)->external_enqueue(job);
  }

  /// The next job: looked for during the spin, then as CAF does (its short
  /// polls, then the condition variable).
  template <class Worker>
  caf::resumable* dequeue(Worker* self) {
    auto& me = d(self);
    if (me.spin.count() > 0) {
      me.spinning.store(true, std::memory_order_relaxed);
      auto until = now() + me.spin.count();
      for (;;) {
        if (auto job = me.queue.take_head()) {
          me.spinning.store(false, std::memory_order_relaxed);
          return job;
        }
        if (auto job = try_steal(self)) {
          me.spinning.store(false, std::memory_order_relaxed);
          return job;
        }
        if (now() >= until)
          break;
        yield();
      }
      me.spinning.store(false, std::memory_order_relaxed);
    }
    return super::dequeue(self);
  }

private:
  /// Nanoseconds of the steady clock.
  static int64_t now();

  /// Gives the core to another runnable thread, if any.
  static void yield();
};

/// Makes `cfg`'s actor system use `spinning_stealing` when its scheduler
/// policy is CAF's default, `stealing`; `spin` is the default of
/// `ferry.scheduler.spin`.
void install_spinning_scheduler(caf::actor_system_config& cfg);

} // namespace ferry::detail
