// io_threads: running a node's I/O contexts (see transport/io_threads.hpp).
#include "transport/io_threads.hpp"

#include "thread_role.hpp"

#include "transport/transport.hpp"

#include <algorithm>

#include <pthread.h>

namespace ferry::detail::net {

io_threads::io_threads(size_t count) {
  count = std::max<size_t>(count, 1);
  for (size_t i = 0; i < count; ++i) {
    auto ctx = std::make_unique<context>();
    auto* raw = ctx.get();
    raw->thread = std::thread{[raw] {
      thread_role::reads_frames();
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
