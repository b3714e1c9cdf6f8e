// readers: threads reading same-host lanes (see lane/readers.hpp).
#include "lane/readers.hpp"

#include "thread_role.hpp"

#include "transport/transport.hpp"

#include "ferry/errc.hpp"

#include <string>

#include <pthread.h>
#include <system_error>

namespace ferry::detail::lane {

namespace {

/// How long a read waits before it looks at the ring's state again, and
/// while a backlog waits for room in the peer's ring.
constexpr std::chrono::milliseconds read_wait{200};
constexpr std::chrono::milliseconds backlog_wait{1};

void run(const std::shared_ptr<ring>& in, uint64_t max_record,
         const readers::deliver_fn& deliver, const readers::ended_fn& ended,
         const readers::backlog& out) {
  pthread_setname_np(pthread_self(), "ferry.lane");
  thread_role::reads_frames();
  std::vector<std::byte> record;
  for (;;) {
    auto pending = out.pending->load(std::memory_order_relaxed);
    if (pending)
      out.drain();
    switch (in->read(record, max_record, pending ? backlog_wait : read_wait)) {
    case ring::status::empty:
    case ring::status::full: // (writes only)
      continue;
    case ring::status::closed:
      ended(caf::none);
      return;
    case ring::status::corrupt:
      ended(caf::make_error(errc::lane_failed,
                            "the peer broke same-host lane " + in->name() +
                              " (a counter out of range or a record over " +
                              std::to_string(max_record) +
                              " bytes); the link goes down"));
      return;
    case ring::status::done:
      break;
    }
    if (auto err = deliver(record)) {
      in->close();
      ended(err);
      return;
    }
  }
}

} // namespace

readers::~readers() {
  stop_all();
}

void readers::start(std::shared_ptr<ring> in, uint64_t max_record,
                    deliver_fn deliver, ended_fn ended, backlog out) {
  auto shared = std::move(in);
  auto done = std::make_shared<std::atomic<bool>>(false);
  auto on_failure = ended;
  std::string failure;
  {
    lock_guard guard{mtx_};
    reap_locked();
    try {
      std::thread thread{
        [shared, done, max_record, deliver = std::move(deliver),
         ended = std::move(ended), out = std::move(out)]() mutable {
          run(shared, max_record, deliver, ended, out);
          out.drain = nullptr;
          // What these hold is let go on this thread, before it is joined.
          deliver = nullptr;
          ended = nullptr;
          done->store(true);
        }};
      entries_.push_back(entry{shared, std::move(done), std::move(thread)});
      return;
    } catch (const std::system_error& e) {
      failure = e.what();
    }
  }
  // Without a reader nothing would take the peer's messages: close the
  // ring, so that the peer's side goes down too, and take this side down.
  shared->close();
  on_failure(caf::make_error(errc::lane_failed,
                             "cannot start the thread that reads same-host "
                             "lane " +
                               shared->name() + ": " + failure +
                               " (too many threads for this process?)"));
}

void readers::stop_all() {
  std::vector<entry> entries;
  {
    lock_guard guard{mtx_};
    entries.swap(entries_);
  }
  for (auto& x : entries)
    x.in->close();
  for (auto& x : entries)
    if (x.thread.joinable())
      x.thread.join();
}

void readers::reap_locked() {
  for (auto i = entries_.begin(); i != entries_.end();) {
    if (i->done->load()) {
      i->thread.join();
      i = entries_.erase(i);
    } else {
      ++i;
    }
  }
}

} // namespace ferry::detail::lane
