// io_threads: the threads a node's connections run on.
//
// A node has `count` I/O threads (`ferry.transport.io-threads`, one by
// default), each running one Asio `io_context`. A connection, a listener
// or a dial is given one of them (`next`, in turn) and everything Asio
// calls for it runs there: the context's handlers of one connection never
// run at once, without a strand. An I/O thread may never wait for a peer
// (transport.hpp, `may_wait`).
//
// Idle strategy: after a handler ran, a thread keeps polling its context
// for `spin` (yielding the core between looks, so a runnable thread of the
// host goes first) before it sleeps in the kernel's poll again. A frame
// that follows within `spin` (the answer to a request just sent, the next
// of a stream) then costs no wake-up; an idle node does not spin at all,
// since nothing ran. `spin` 0 sleeps at once.
//
// Ownership: the node owns its `io_threads`; `stop` stops the contexts and
// joins the threads; the contexts live on until this object goes, and with
// them the handlers that never ran (and what they hold). Every socket and
// timer of a context must go before the context: the node drops its links
// (and their connections) after `stop` and before it destroys this.
//
// Thread-safety: `next` and `on_io_thread` may be called from any thread;
// `stop` once, when nothing makes connections any more (the node's end).
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

namespace ferry::detail::net {

class io_threads {
public:
  /// Starts `count` threads (at least one) that poll for `spin` after
  /// each piece of work before they sleep.
  explicit io_threads(size_t count,
                      std::chrono::nanoseconds spin = std::chrono::nanoseconds{
                        0});

  io_threads(const io_threads&) = delete;
  io_threads& operator=(const io_threads&) = delete;

  ~io_threads();

  /// Returns the context to run the next connection on.
  boost::asio::io_context& next();

  /// Returns whether the calling thread is one of these.
  bool on_io_thread() const;

  /// Stops the contexts (their pending handlers are dropped) and joins the
  /// threads. Idempotent.
  void stop();

private:
  struct context {
    boost::asio::io_context ioc{1};
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
      work{ioc.get_executor()};
    std::thread thread;
  };

  std::vector<std::unique_ptr<context>> contexts_;
  std::atomic<size_t> turn_{0};
  bool stopped_ = false;
};

} // namespace ferry::detail::net
