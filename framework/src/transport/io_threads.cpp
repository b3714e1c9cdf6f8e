// io_threads: running a node's I/O contexts (see transport/io_threads.hpp).
#include "transport/io_threads.hpp"

#include "thread_role.hpp"

#include "transport/transport.hpp"

#include <algorithm>

#include <pthread.h>
#include <sched.h>

namespace ferry::detail::net {

namespace {

/// Runs `ioc` until it stops, polling for `spin` after each handler.
void run_spinning(boost::asio::io_context& ioc, std::chrono::nanoseconds spin) {
  using clock = std::chrono::steady_clock;
  // Sleeps in the kernel until something is ready, runs it, then looks
  // again without sleeping until `spin` passed with nothing to run.
  while (ioc.run_one() > 0) {
    auto last = clock::now();
    while (!ioc.stopped()) {
      if (ioc.poll() > 0) {
        last = clock::now();
      } else if (clock::now() - last >= spin) {
        break;
      } else {
        sched_yield();
      }
    }
  }
}

} // namespace

io_threads::io_threads(size_t count, std::chrono::nanoseconds spin) {
  count = std::max<size_t>(count, 1);
  for (size_t i = 0; i < count; ++i) {
    auto ctx = std::make_unique<context>();
    auto* raw = ctx.get();
    raw->thread = std::thread{[raw, spin] {
      thread_role::reads_frames();
      if (spin.count() > 0)
        run_spinning(raw->ioc, spin);
      else
        raw->ioc.run();
    }};
    // Named for top, perf and the like, from here: the name is there once
    // the node has started, whether or not the thread has run yet.
    pthread_setname_np(raw->thread.native_handle(), "ferry.io");
    contexts_.push_back(std::move(ctx));
  }
}

io_threads::~io_threads() {
  stop();
}

boost::asio::io_context& io_threads::next() {
  auto i = turn_.fetch_add(1, std::memory_order_relaxed) % contexts_.size();
  return contexts_[i]->ioc;
}

bool io_threads::on_io_thread() const {
  auto me = std::this_thread::get_id();
  return std::any_of(contexts_.begin(), contexts_.end(),
                     [&](auto& x) { return x->thread.get_id() == me; });
}

void io_threads::stop() {
  if (stopped_)
    return;
  stopped_ = true;
  for (auto& x : contexts_) {
    x->work.reset();
    x->ioc.stop();
  }
  for (auto& x : contexts_)
    if (x->thread.joinable())
      x->thread.join();
  // The contexts stay until this object goes: sockets and timers of the
  // connections still held elsewhere need their context when they close.
}

} // namespace ferry::detail::net
